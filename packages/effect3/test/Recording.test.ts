/**
 * Recording a session (issue 23): no key ever reaches the file, `redact` changes more, a file
 * that cannot be written is a typed error and never a lost session, only the first session is
 * recorded, and `read` gives the lines back.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { readFileSync, writeFileSync } from "node:fs"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { type WebSocket, WebSocketServer } from "ws"
import { AgentSessions, Answer, Dialect, NodeAgentSessions, Recording, Session } from "../src/index.js"
import { Simulator } from "effect-agent-session-simulator"
import { AgentSessionsTest } from "../src/testing/index.js"
import { tempPath } from "./recording/helpers.js"

const key = "sk-live-NEVER-IN-THE-FILE-42"
const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

const onTestClock = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.fork(Effect.provide(effect, TestContext.TestContext)), (fiber) => Effect.flatten(Fiber.await(fiber)))

/**
 * A service that echoes the key it was given wherever it can: in a member named `apiKey`, an
 * `x-api-key`, an `Authorization` header, a URL, plain text; then completes.
 */
const echoingService = Effect.acquireRelease(
  Effect.async<WebSocketServer>((resume) => {
    const server: WebSocketServer = new WebSocketServer({ port: 0, host: "127.0.0.1" }, () => resume(Effect.succeed(server)))
    server.on("connection", (ws: WebSocket) => {
      ws.once("message", (handshake: WebSocket.RawData) => {
        const { apiKey } = JSON.parse(String(handshake)) as { apiKey: string }
        const frames = [
          { event: "connected", data: { apiKey, api_key: apiKey, "x-api-key": apiKey, Authorization: `Bearer ${apiKey}` } },
          { event: "thoughts_and_memories", data: { thought: `Your key is ${apiKey}`, memory: `https://x.example/?apiKey=${apiKey}&q=1` } },
          { event: "complete", data: { response: "done", type: "STRING", total_cost: 0, session_id: "ses_echo" } }
        ]
        for (const frame of frames) ws.send(JSON.stringify(frame))
        ws.close(1000)
      })
    })
  }),
  (server) => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
)

/** A service that sends the frames `frames` makes of the key it was given (text or bytes), then closes normally. */
const rawService = (frames: (apiKey: string) => ReadonlyArray<string | Buffer>) =>
  Effect.acquireRelease(
    Effect.async<WebSocketServer>((resume) => {
      const server: WebSocketServer = new WebSocketServer({ port: 0, host: "127.0.0.1" }, () => resume(Effect.succeed(server)))
      server.on("connection", (ws: WebSocket) => {
        ws.once("message", (handshake: WebSocket.RawData) => {
          const { apiKey } = JSON.parse(String(handshake)) as { apiKey: string }
          for (const frame of frames(apiKey)) ws.send(frame)
          ws.close(1000)
        })
      })
    }),
    (server) => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
  )

const completeFrame = JSON.stringify({ event: "complete", data: { response: "done", type: "STRING", total_cost: 0, session_id: "ses_echo" } })

/** The base64 runs any base64 of bytes holding the key holds, whatever the key's offset. */
const base64OfKey = [0, 1, 2].map((shift) => Buffer.from(key.slice(shift, shift + 18)).toString("base64"))

const attach = AgentSessions.attach(
  Session.SessionInfo.make({
    session_id: Session.SessionId.make("ses_echo"),
    status: Option.none(),
    start_time: Option.none(),
    end_time: Option.none(),
    error: Option.none()
  }),
  10
).pipe(Effect.flatMap((running) => running.outcome), Effect.scoped)

/** A file system whose files fail (or never finish) every write. */
const brokenFiles = (write: Effect.Effect<void, PlatformError.PlatformError>) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs) => ({
      ...fs,
      open: (path: string, options?: FileSystem.OpenFileOptions) =>
        Effect.map(fs.open(path, options), (file) =>
          new Proxy(file, { get: (target, name) => (name === "writeAll" ? () => write : Reflect.get(target, name)) }))
    }))
  ).pipe(Layer.provide(NodeFileSystem.layer))

const noSpace = new PlatformError.SystemError({
  reason: "Unknown",
  module: "FileSystem",
  method: "writeAll",
  description: `ENOSPC: no space left on device (while writing with ${key})`
})

describe("Recording", () => {
  it.live("no key reaches the file, wherever the service echoes it; the recording replays alike", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* echoingService
      const { port } = server.address() as { port: number }
      const path = tempPath("echo.jsonl")
      const sdk = NodeAgentSessions.layer({ apiKey: key, baseUrl: `http://127.0.0.1:${port}` })
      const live = yield* attach.pipe(
        Effect.tap(() => Recording.flush),
        Effect.provide(sdk.pipe(Recording.record({ path }), Layer.provide(NodeFileSystem.layer)))
      )
      const text = readFileSync(path, "utf8")
      assert.notInclude(text, key)
      assert.notInclude(text, "NEVER-IN-THE-FILE")
      // Each place the key was, redacted (members, header value, URL parameter, plain text).
      assert.include(text, String.raw`\"apiKey\":\"<redacted>\"`)
      assert.include(text, String.raw`\"api_key\":\"<redacted>\"`)
      assert.include(text, String.raw`\"x-api-key\":\"<redacted>\"`)
      assert.include(text, String.raw`\"Authorization\":\"<redacted>\"`)
      assert.include(text, "Your key is <redacted>")
      assert.include(text, "?apiKey=<redacted>&q=1")
      const header = JSON.parse(text.split("\n")[0] ?? "{}") as Record<string, unknown>
      assert.strictEqual(header["sessionId"], "ses_echo")
      assert.strictEqual(header["transport"], "websocket")
      assert.strictEqual(header["version"], Recording.formatVersion)

      // A recording of `attach` (no create) replays through `attach`.
      const replayed = yield* onTestClock(
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(attach)
          yield* TestClock.adjust("1 minute")
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(AgentSessionsTest.replay(path)))
      )
      assert.strictEqual(replayed.response, live.response)
      assert.deepStrictEqual(replayed.events.map((e) => e._tag), live.events.map((e) => e._tag))
    })))

  it.live("a binary frame that is not UTF-8 is written with the key's bytes overwritten: neither the key nor its base64 in the file", () =>
    Effect.scoped(Effect.gen(function*() {
      const sent: Array<Buffer> = []
      const server = yield* rawService((apiKey) => {
        // A frame the SDK reads (a stray byte in a string decodes as U+FFFD) but that is not UTF-8.
        const bytes = Buffer.concat([
          Buffer.from(`{"event":"thoughts_and_memories","data":{"thought":"key ${apiKey} `),
          Buffer.from([0xff, 0xfe]),
          Buffer.from("\",\"memory\":\"m\"}}")
        ])
        sent.push(bytes)
        return [bytes, completeFrame]
      })
      const { port } = server.address() as { port: number }
      const path = tempPath("binary.jsonl")
      const live = yield* attach.pipe(
        Effect.tap(() => Recording.flush),
        Effect.provide(
          NodeAgentSessions.layer({ apiKey: key, baseUrl: `http://127.0.0.1:${port}` }).pipe(
            Recording.record({ path }),
            Layer.provide(NodeFileSystem.layer)
          )
        )
      )
      assert.strictEqual(live.response, "done")
      const text = readFileSync(path, "utf8")
      assert.notInclude(text, key)
      for (const run of base64OfKey) assert.notInclude(text, run)
      const frames = text.split("\n").filter((line) => line.includes("\"base64\""))
      assert.strictEqual(frames.length, 1)
      const written = Buffer.from((JSON.parse(frames[0] ?? "{}") as { base64: string }).base64, "base64")
      // The same bytes but the key's, overwritten by a placeholder of its length.
      const original = sent[0] ?? Buffer.alloc(0)
      assert.strictEqual(written.length, original.length)
      assert.include(written.toString("latin1"), `key <redacted${"*".repeat(key.length - 10)}> \xff\xfe`)
      assert.notInclude(written.toString("latin1"), key)

      // It replays: the same events, the bytes as written.
      const replayed = yield* onTestClock(
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(attach)
          yield* TestClock.adjust("1 minute")
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(AgentSessionsTest.replay(path)))
      )
      assert.deepStrictEqual(replayed.events.map((e) => e._tag), live.events.map((e) => e._tag))
    })))

  it.live("a key the recorder cannot redact (base64 of it in a frame) stops the recording with RecordingFailed before that line", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* rawService((apiKey) => [
        JSON.stringify({ event: "thoughts_and_memories", data: { thought: `Basic ${Buffer.from(`me:${apiKey}`).toString("base64")}`, memory: "m" } }),
        completeFrame
      ])
      const { port } = server.address() as { port: number }
      const path = tempPath("refused.jsonl")
      const [outcome, flushed] = yield* Effect.zip(attach, Effect.flip(Recording.flush)).pipe(
        Effect.provide(
          NodeAgentSessions.layer({ apiKey: key, baseUrl: `http://127.0.0.1:${port}` }).pipe(
            Recording.record({ path }),
            Layer.provide(NodeFileSystem.layer)
          )
        )
      )
      // The session goes on; the recording stopped, and says why without the key.
      assert.strictEqual(outcome.response, "done")
      assert.strictEqual(flushed._tag, "RecordingFailed")
      assert.include(flushed.message, "a frame line holds a known key in base64 that cannot be redacted")
      assert.notInclude(flushed.message, key)
      const text = readFileSync(path, "utf8")
      assert.notInclude(text, key)
      assert.notInclude(text, Buffer.from(`me:${key}`).toString("base64").slice(4, 24))
    })))

  it.live("redact changes what is written: the answer's input is kept out", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 2, ask: "input", frameDelay: "1 millis" } })
      const path = tempPath("redacted.jsonl")
      const redact = (entry: Recording.Entry): Recording.Entry =>
        entry.type === "answer" && entry.data.input !== undefined ? { ...entry, data: { ...entry.data, input: "<email>" } } : entry
      yield* AgentSessions.run(request, { onRequest: () => Effect.succeed(Answer.grant("jane@example.com")) }).pipe(
        Effect.tap(() => Recording.flush),
        Effect.provide(
          NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }).pipe(
            Recording.record({ path, redact }),
            Layer.provide(NodeFileSystem.layer)
          )
        )
      )
      const answers = readFileSync(path, "utf8").split("\n").filter((line) => line.includes("\"type\":\"answer\""))
      assert.strictEqual(answers.length, 1)
      assert.include(answers[0], "\"input\":\"<email>\"")
      // The service echoed the input in its own frames: `redact` is the place to remove those too.
      assert.notInclude(answers[0], "jane@example.com")
    })))

  it.live("a file that cannot be opened fails the layer with RecordingFailed; nothing was sent", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key })
      const error = yield* Effect.flip(
        AgentSessions.run(request).pipe(
          Effect.provide(
            NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }).pipe(
              Recording.record({ path: "/nonexistent-directory/session.jsonl" }),
              Layer.provide(NodeFileSystem.layer)
            )
          )
        )
      )
      assert.strictEqual(error._tag, "RecordingFailed")
      assert.include(error.message, "cannot open the file")
      assert.strictEqual(yield* sim.httpRequests, 0)
    }).pipe(Effect.scoped))

  /** A session on a disk whose writes fail or stall: its outcome, and what `flush` says. */
  const onBrokenDisk = (write: Effect.Effect<void, PlatformError.PlatformError>, bufferSize?: number) =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 5, ask: "none", frameDelay: "1 millis" } })
      return yield* Effect.zip(AgentSessions.run(request), Effect.flip(Recording.flush)).pipe(
        Effect.provide(
          NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }).pipe(
            Recording.record({ path: tempPath("broken.jsonl"), bufferSize }),
            Layer.provide(brokenFiles(write))
          )
        )
      )
    }).pipe(Effect.scoped)

  it.live("a write that fails stops the recording with RecordingFailed; the session goes on to its outcome", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const [outcome, flushed] = yield* onBrokenDisk(Effect.fail(noSpace)).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logs.push(String(message)))))
      )
      assert.strictEqual(outcome.actions, 5)
      assert.strictEqual(flushed._tag, "RecordingFailed")
      assert.include(flushed.message, "ENOSPC: no space left on device")
      assert.notInclude(flushed.message, key)
      assert.isTrue(logs.some((line) => line.includes("is incomplete")), logs.join("\n"))
    }))

  it.live("a writer that falls bufferSize bytes behind stops the recording; the session is never slowed", () =>
    Effect.gen(function*() {
      // A disk that never finishes a write.
      const [outcome, flushed] = yield* onBrokenDisk(Effect.never, 2048)
      assert.strictEqual(outcome.actions, 5)
      assert.strictEqual(flushed._tag, "RecordingFailed")
      assert.include(flushed.message, "fell behind the session by more than 2048 bytes")
    }))

  it.live("only the first session is recorded", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ accountKey: key, scenario: { actions: 1, ask: "none", frameDelay: "1 millis" } })
      const path = tempPath("first.jsonl")
      const [first, second] = yield* Effect.zip(AgentSessions.run(request), AgentSessions.run(request)).pipe(
        Effect.tap(() => Recording.flush),
        Effect.provide(
          NodeAgentSessions.layer({ apiKey: key, baseUrl: sim.baseUrl }).pipe(
            Recording.record({ path }),
            Layer.provide(NodeFileSystem.layer)
          )
        )
      )
      const text = readFileSync(path, "utf8")
      assert.include(text, first.sessionId)
      assert.notInclude(text, second.sessionId)
      assert.strictEqual(text.split("\n").filter((line) => line.includes("\"type\":\"create\"")).length, 1)
    }).pipe(Effect.scoped))

  it.effect("read gives the header, then every line; a damaged line fails with InvalidRecording naming it", () =>
    Effect.gen(function*() {
      const path = tempPath("read.jsonl")
      const lines = [
        { type: "header", format: Recording.formatName, version: 1, sdk: "0.1.0", dialect: Dialect.observed, transport: "sse", sessionId: "s", recordedAt: "x" },
        { type: "connect", t: 0, conn: 1 },
        { type: "frame", t: 1, conn: 1, event: "started", data: "{}" }
      ]
      yield* Effect.sync(() => writeFileSync(path, [...lines.map((line) => JSON.stringify(line)), "{\"type\":\"frame\"}"].join("\n")))
      const read = yield* Recording.read(path).pipe(Stream.either, Stream.runCollect)
      const values = Chunk.toReadonlyArray(read)
      assert.strictEqual(values.length, 4)
      assert.deepStrictEqual(values.slice(0, 3).map((value) => value._tag === "Right" ? value.right.type : "error"), [
        "header",
        "connect",
        "frame"
      ])
      const last = values[3]
      assert.isTrue(last?._tag === "Left" && last.left.line === 4 && last.left.reason.startsWith("frame: "))
    }))
})
