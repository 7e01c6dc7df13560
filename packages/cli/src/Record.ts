/**
 * `--record FILE` of `run` and `attach`: the session recorded to a file, to replay it in tests
 * (`docs/testing.md`): JSON Lines, no key in it.
 *
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { RecordingFailed } from "effect-agent-session/Errors"
import type * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as Recording from "effect-agent-session/Recording"
import { UsageError } from "./ExitCode.js"
import type * as Render from "./Render.js"

/**
 * The `--record FILE` flag.
 *
 * @since 0.1.0
 * @category models
 */
export const recordOption = Options.text("record").pipe(
  Options.withDescription(
    "Record the session to this file (JSON Lines, no key in it), to replay it in tests or with simulate --replay"
  ),
  Options.optional
)

/** Control characters and escape sequences out of text from a file or the service. */
const safe = (text: string): string => text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, "?")

/**
 * Checks that the file can be written, before anything is sent: its folder is created when
 * missing (as `mkdir -p`), and a folder or file that cannot be made or written is a usage error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (record: Option.Option<string>): Effect.Effect<void, UsageError> =>
  Option.match(record, {
    onNone: () => Effect.void,
    onSome: (path) =>
      Effect.try({
        try: () => {
          Fs.mkdirSync(Path.dirname(path), { recursive: true })
          Fs.closeSync(Fs.openSync(path, "a"))
        },
        catch: (cause) =>
          new UsageError({
            message: `--record: cannot write ${safe(path)}: ${safe(cause instanceof Error ? cause.message : String(cause))}`
          })
      })
  })

/**
 * The SDK layer, recording the session when `--record` is given.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(
  sdk: Layer.Layer<NodeAgentSessions.Services, E, R>,
  record: Option.Option<string>
): Layer.Layer<NodeAgentSessions.Services, E | RecordingFailed, R> =>
  Option.match(record, {
    onNone: () => sdk,
    onSome: (path) => sdk.pipe(Recording.record({ path }), Layer.provide(NodeFileSystem.layer))
  })

/**
 * After the session, whatever its end: everything recorded written, and one line on standard
 * error saying where the recording is, or why it is incomplete.
 *
 * @since 0.1.0
 * @category constructors
 */
export const finish = (sink: Render.Sink): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(Recording.Recorder), (recorder) =>
    Option.match(recorder, {
      onNone: () => Effect.void,
      onSome: (recorder) =>
        recorder.flush.pipe(
          Effect.timeout("10 seconds"),
          Effect.match({
            onSuccess: () => sink.err(`recorded: ${safe(recorder.path)}\n`),
            onFailure: (error) =>
              sink.err(`warning: the recording ${safe(recorder.path)} is incomplete: ${safe(error.message)}\n`)
          })
        )
    }))
