/**
 * `effect-agent-session simulate --replay FILE`: serve a recorded session over real sockets
 * (`docs/testing.md`), print how to run against it, and a line as each replay ends.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Recording from "effect-agent-session/Recording"
import { Replay } from "effect-agent-session-simulator"
import * as CliConfig from "./Config.js"
import { CliExit, ExitCode } from "./ExitCode.js"
import type * as Render from "./Render.js"

/**
 * The flags of a replay.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayFlags {
  readonly path: string
  readonly port: number
  readonly host: string
  /** The key clients must use (default: as for the simulator). */
  readonly accountKey: Option.Option<string>
  readonly speed: number
  readonly json: boolean
}

/** Control characters and escape sequences out of text read from the file. */
const safe = (text: string): string => text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, "?")

/** A shell word. */
const quote = (text: string): string => `'${safe(text).replace(/'/g, "'\\''")}'`

/** The `run` (or `attach`) command that replays the recorded session. */
const commandFor = (path: string, sessionId: string): Effect.Effect<string> =>
  Recording.read(path).pipe(
    Stream.take(4),
    Stream.runCollect,
    Effect.map((lines) => {
      for (const line of lines) {
        if (line.type !== "create") continue
        const { goal, max_actions, start_url } = line.request
        return `npx effect-agent-session run --goal ${quote(String(goal))} --start-url ${quote(String(start_url))} --max-actions ${
          Number(max_actions)
        }`
      }
      return `npx effect-agent-session attach ${quote(sessionId)}`
    }),
    Effect.orElseSucceed(() => `npx effect-agent-session attach ${quote(sessionId)}`)
  )

/**
 * Serves the recording until interrupted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (flags: ReplayFlags, sink: Render.Sink): Effect.Effect<void, CliExit> =>
  Effect.gen(function*() {
    if (!(flags.speed > 0)) {
      sink.err(`error: --speed must be a number above 0, not ${flags.speed}\n`)
      return yield* new CliExit({ code: ExitCode.usage })
    }
    const replay = yield* Replay.make({
      path: flags.path,
      port: flags.port,
      host: flags.host,
      ...(Option.isSome(flags.accountKey) ? { accountKey: flags.accountKey.value } : {}),
      speed: flags.speed
    }).pipe(
      Effect.catchAll((error) =>
        Effect.gen(function*() {
          sink.err(
            error._tag === "InvalidRecording"
              ? `error: ${safe(error.message)}\n`
              : `error: cannot listen on ${flags.host}:${flags.port}: ${safe(String(error.cause))}\n`
          )
          return yield* new CliExit({ code: ExitCode.usage })
        })
      )
    )
    const { dialect, sessionId, transport } = replay.header
    if (flags.json) {
      sink.out(JSON.stringify({
        baseUrl: replay.baseUrl,
        wsUrl: replay.wsUrl,
        port: replay.port,
        accountKey: replay.accountKey,
        dialect: dialect.name,
        transport,
        sessionId,
        replay: flags.path
      }) + "\n")
    } else {
      const command = yield* commandFor(flags.path, sessionId)
      sink.out([
        `Replaying ${safe(flags.path)} (${safe(dialect.name)} dialect, recorded over ${transport}, speed ${flags.speed})`,
        `  base URL:    ${replay.baseUrl}`,
        `  WS URL:      ${replay.wsUrl}`,
        `  account key: ${replay.accountKey}`,
        `  session:     ${safe(sessionId)}`,
        "",
        "In another terminal:",
        `  export ${CliConfig.Env.baseUrl}=${replay.baseUrl}`,
        `  export ${CliConfig.Env.apiKey}=${replay.accountKey}`,
        ...(dialect.name === "observed" ? [`  export ${CliConfig.Env.dialect}=observed`] : []),
        ...(transport === "sse" ? [`  export AGENT_SESSION_TRANSPORT=sse`] : []),
        `  ${command}`,
        "",
        "Press Ctrl-C to stop."
      ].join("\n") + "\n")
    }
    // A line as each replay ends: what it served, or how the client diverged from the recording.
    yield* Stream.runForEach(replay.ends, (end) =>
      Effect.sync(() => {
        if (flags.json) {
          sink.out(JSON.stringify(Either.match(end, {
            onRight: (report) => ({ kind: "replayed", ...report }),
            onLeft: (error) => ({ kind: "replay-failed", error: error._tag, message: error.message })
          })) + "\n")
          return
        }
        Either.match(end, {
          onRight: (report) =>
            sink.out(
              `replayed: ${report.frames} frames over ${report.connections} connection(s), ${report.answers} answer(s) as recorded\n`
            ),
          onLeft: (error) => sink.out(`replay failed: ${safe(error.message)}\n`)
        })
      }))
    return yield* Effect.never
  }).pipe(Effect.scoped)
