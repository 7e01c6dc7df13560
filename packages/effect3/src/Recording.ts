/**
 * Recorded sessions: record one real session to a file, then replay it in tests for
 * ever, in memory (`AgentSessionsTest.replay` from `effect-agent-session/testing`) or over
 * sockets to any client (the simulator's `Replay`, `effect-agent-session simulate --replay`).
 *
 * A recording is JSON Lines (docs/testing.md documents every line): a header with the format
 * version, the SDK version, the dialect and the transport; then the create request and
 * response, every frame received on the event channel with its time offset and connection
 * number, every answer written, every connection's end (a drop, a close code, a refusal) and the
 * session's end, in the order they happened.
 *
 * - **What is recorded.** {@link layer} wraps the SDK's `AgentApi` and `EventStream`: the first
 *   session created (or, without a create, connected to) is recorded; another is not (a warning
 *   says so). Frames are recorded as the transport received them, before decoding: unknown
 *   events, odd fields, malformed frames included.
 * - **No key in the file.** Every key `Credentials` knows (as it is, percent-encoded,
 *   JSON-escaped; in a binary frame's bytes, overwritten at the same length), every `apiKey` /
 *   `api_key` / `x-api-key` / `Authorization` member's value, the dialect's `apiKey` query
 *   parameter and every bearer credential is replaced by `<redacted>` before anything is written;
 *   JSON stays valid JSON, and a parameter only named like a key (`?key=pizza`) is kept. A line
 *   that would still hold a key in a form that cannot be redacted stops the recording with
 *   `RecordingFailed` instead of being written. `redact`
 *   changes more (answers' input, say): it is applied to every line but the header, and the
 *   replay applies it to the application's answers before comparing them.
 * - **Never in the way.** Frames are noted from the socket's callback into a queue; one fiber
 *   writes. When the writer falls more than `bufferSize` bytes behind, or the file cannot be
 *   written, the recording stops with `RecordingFailed` (from {@link Service.flush}, and a
 *   warning log when the layer closes) and the session goes on untouched.
 *
 * @example
 * ```ts
 * import { AgentSessions, NodeAgentSessions, Recording } from "effect-agent-session"
 * import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 *
 * const Recorded = NodeAgentSessions.layerConfig().pipe(
 *   Recording.record({ path: "session.jsonl" }),
 *   Layer.provide(NodeFileSystem.layer)
 * )
 *
 * const program = AgentSessions.run({ start_url: "https://example.com", max_actions: 5, goal: "Read the title" }).pipe(
 *   Effect.tap(() => Recording.flush)
 * )
 * // Effect.runPromise(Effect.provide(program, Recorded))
 * ```
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import { Recording as Format } from "effect-agent-session-core"
import { FileSource } from "effect-agent-session-shell"
import * as Fs from "node:fs"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { AgentApi } from "./AgentApi.js"
import * as AgentSessions from "./AgentSessions.js"
import type * as Credentials from "./Credentials.js"
import type * as Dialect from "./Dialect.js"
import { InvalidRecording, type RecordingFailed } from "./Errors.js"
import * as EventStream from "./EventStream.js"
import * as internal from "./internal/recording/record.js"

/**
 * The header line: the format, its version, the SDK version, the dialect (every choice), the
 * transport and the session.
 *
 * @since 0.1.0
 * @category models
 */
export type Header = Format.Header

/**
 * Every line after the header (docs/testing.md lists them): `create`, `created`,
 * `create-failed`, `connect`, `open`, `frame`, `too-large`, `alive`, `answer`, `close`, `end`.
 * `t` is the time in milliseconds since the recording started, `conn` the connection (1, 2, ...).
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = Format.Entry

/**
 * Any line of a recording.
 *
 * @since 0.1.0
 * @category models
 */
export type Line = Format.Line

/**
 * How a recorded connection ended (the `outcome` of a `close` line).
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = Format.Outcome

/**
 * The `format` of a recording's header: `effect-agent-session/recording`.
 *
 * @since 0.1.0
 * @category models
 */
export const formatName: string = Format.FORMAT

/**
 * The format version this SDK writes, and the newest it reads.
 *
 * @since 0.1.0
 * @category models
 */
export const formatVersion: number = Format.VERSION

/**
 * What replaces a secret in a recording: `<redacted>`.
 *
 * @since 0.1.0
 * @category models
 */
export const redacted: string = Format.REDACTED

/**
 * Options of {@link layer} and {@link record}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The file to write (created, or replaced). */
  readonly path: string
  /**
   * Changes each line before it is written (after the keys are removed), such as an answer's
   * input or a frame's personal data. Pass the same function to the replay: it applies it to the
   * application's answers before comparing them with the recorded ones.
   */
  readonly redact?: ((entry: Entry) => Entry) | undefined
  /**
   * The bytes of records waiting to be written before the recording gives up with
   * `RecordingFailed` (the session goes on). Default 8 MiB.
   */
  readonly bufferSize?: number | undefined
  /**
   * The dialect and transport named in the header when the session never connected (a create
   * that failed); otherwise the connection's own are recorded. Default `Dialect.documented` and
   * `"websocket"`.
   */
  readonly dialect?: Dialect.Dialect | undefined
  /** See `dialect`. */
  readonly transport?: "websocket" | "sse" | undefined
}

/**
 * The recorder of a layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The file being written. */
  readonly path: string
  /**
   * Waits until every record so far is in the file; fails with `RecordingFailed` when the
   * recording stopped (the file could not be written, or the writer fell behind).
   */
  readonly flush: Effect.Effect<void, RecordingFailed>
  /** Why the recording stopped, if it did. */
  readonly failure: Effect.Effect<Option.Option<RecordingFailed>>
}

/**
 * The recorder service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Recorder extends Context.Tag("effect-agent-session/Recording/Recorder")<Recorder, Service>() {}

/**
 * `AgentApi` and `EventStream` that record the first session to `options.path`, over the
 * `AgentApi` and `EventStream` they are given (the file is closed with the layer). Fails with
 * `RecordingFailed` when the file cannot be opened. Build the façade on top (or use
 * {@link record}, which does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  AgentApi | EventStream.EventStream | Recorder,
  RecordingFailed,
  AgentApi | EventStream.EventStream | Credentials.Credentials | FileSystem.FileSystem
> =>
  Layer.scopedContext(Effect.gen(function*() {
    const recorder = yield* internal.make(options)
    const api = yield* AgentApi
    const events = yield* EventStream.EventStream
    return Context.make(AgentApi, recorder.wrapApi(api)).pipe(
      Context.add(EventStream.EventStream, recorder.wrapEvents(events)),
      Context.add(Recorder, { path: recorder.path, flush: recorder.flush, failure: recorder.failure })
    )
  }))

/**
 * Records the sessions of an SDK layer (such as `NodeAgentSessions.layerConfig()`): the same
 * services, the façade rebuilt over the recording `AgentApi` and `EventStream`, and the
 * {@link Recorder}. Needs a `FileSystem` (`NodeFileSystem.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const record = (options: Options) =>
<E, R>(
  sdk: Layer.Layer<AgentApi | EventStream.EventStream | Credentials.Credentials, E, R>
): Layer.Layer<
  AgentSessions.AgentSessions | AgentApi | EventStream.EventStream | Credentials.Credentials | Recorder,
  E | RecordingFailed,
  R | FileSystem.FileSystem
> =>
  // `fresh`: the SDK layer may hold its own `AgentSessions.layer`, which the build would
  // otherwise share (layers are memoized by reference) instead of building it over these.
  Layer.provideMerge(Layer.fresh(AgentSessions.layer), Layer.provideMerge(layer(options), sdk))

/**
 * Waits until every record so far is in the file: see {@link Service.flush}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const flush: Effect.Effect<void, RecordingFailed, Recorder> = Effect.flatMap(Recorder, (recorder) => recorder.flush)

/**
 * Options of {@link read}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  /** The longest line read; a longer one is `InvalidRecording`. Default 16 Mi characters. */
  readonly maxLineLength?: number | undefined
}

/**
 * The lines of a recording, the header first, read line by line (never whole) and validated as
 * they come: a file that is not a recording, of a newer version, or with a line that is not
 * valid fails with `InvalidRecording` naming the line.
 *
 * @example
 * ```ts
 * import { Recording } from "effect-agent-session"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 *
 * // How many frames each connection received.
 * const frames = Recording.read("session.jsonl").pipe(
 *   Stream.runFold(new Map<number, number>(), (counts, line) =>
 *     line.type === "frame" ? counts.set(line.conn, (counts.get(line.conn) ?? 0) + 1) : counts
 *   )
 * )
 * // Effect.runPromise(frames)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (path: string, options: ReadOptions = {}): Stream.Stream<Line, InvalidRecording> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const opened = yield* Effect.acquireRelease(
      Effect.sync(() => Format.Reader.open(FileSource.fromFile(path, Fs), options.maxLineLength ?? Format.defaultMaxLineLength)),
      (opened) => Effect.sync(() => ("reader" in opened ? opened.reader.close() : undefined))
    )
    if (!("reader" in opened)) return Stream.fail(new InvalidRecording({ path, line: opened.line, reason: opened.reason }))
    const { header, reader } = opened
    const entries = Stream.repeatEffectOption(Effect.suspend(() => {
      const next = reader.take()
      switch (next._tag) {
        case "Entry":
          return Effect.succeed(next.entry)
        case "Done":
          return Effect.fail(Option.none())
        case "Invalid":
          return Effect.fail(Option.some(new InvalidRecording({ path, line: next.line, reason: next.reason })))
      }
    }))
    return Stream.concat(Stream.succeed<Line>(header), entries)
  }))
