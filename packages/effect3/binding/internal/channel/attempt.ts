/**
 * One attempt of a connection, in two short steps with nothing running between them: `start`
 * (the core begins it, the key is read afresh, the transport starts) and, once the core says the
 * attempt is over, `end` (the attempt released, then the core's decision: end, or retry on which
 * schedule). While the attempt is open no fiber waits for it: the core's settle notification
 * (`Attempt.whenSettled`) starts the next step (`loop.ts`).
 *
 * No `Scope` per attempt unless its transport asks for one (`Hooks.scope`): releasing an attempt
 * stops its answer writer, closes its transport (`Io.close`), closes that scope and ends the
 * `EventStream.attempt` span, each with the attempt's ending (or the close's interruption).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import type { Connection } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-shell"
import type * as Credentials from "../../../src/Credentials.js"
import type { ConnectTimeout, EventStreamError } from "../../../src/Errors.js"
import { catchFailure } from "../../../src/internal/line.js"
import { AttemptHooks, type Shell } from "./shell.js"
import * as Spans from "./spans.js"
import { Fatal, type Transport } from "./transport.js"

/** The options every attempt of a connection shares (the engine's options have them). */
export interface AttemptOptions {
  readonly printableUrl: string
  readonly agent: Credentials.AgentKeyRef | string | undefined
  readonly transport: Transport
}

/**
 * Starts an attempt: returns it once its transport is started (not open), or its id when it
 * never started (its key could not be read: the core was told how it ended).
 */
export const start = (
  shell: Shell,
  options: AttemptOptions,
  credentials: Credentials.Service
): Effect.Effect<AttemptHooks | number> =>
  Effect.gen(function*() {
    const id = shell.begin()
    const span = yield* Spans.make("EventStream.attempt", {
      sessionId: shell.sessionId,
      attempt: shell.connection.attemptNumber,
      url: options.printableUrl
    })
    const key: Redacted.Redacted<string> | undefined = yield* catchFailure(
      credentials.keyFor("connect", options.agent),
      (error) =>
        Effect.sync(() => {
          Spans.end(span, shell.clock, Exit.fail(error))
          shell.closed(id, Fatal(error, "failed"))
          return undefined
        })
    )
    if (key === undefined) return id
    const attempt = new AttemptHooks(shell, id, key, span)
    shell.current = attempt
    yield* options.transport(attempt)
    return attempt
  })

/** After the attempt ended: released with its ending, then what the core decides. */
export const end = (
  shell: Shell,
  attempt: AttemptHooks
): Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>> =>
  Effect.andThen(
    Effect.suspend(() => release(attempt, Exit.succeed(shell.connection.endingOf(attempt.id)))),
    decided(shell, attempt.id)
  )

/**
 * Releases an attempt (once), in order: its answer writer stopped (an answer in flight is
 * finished first), its transport closed, its scope closed with `exit` (a recorder's tap reads
 * it), its span ended. Uninterruptible: a close by the caller while it waits for the writer or
 * the SSE reader to stop must not skip the rest (the socket's close).
 */
export const release = (attempt: AttemptHooks, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.uninterruptible(Effect.suspend(() => {
    if (attempt.released) return Effect.void
    attempt.released = true
    const writer = attempt.writer
    return Effect.andThen(
      writer === undefined ? Effect.void : Fiber.interrupt(writer),
      Effect.suspend(() => {
        attempt.io?.close?.()
        const scope = attempt.scoped
        return Effect.andThen(
          scope === undefined ? Effect.void : Scope.close(scope, exit),
          Effect.sync(() => Spans.end(attempt.span, attempt.shell.clock, exit))
        )
      })
    )
  }))

/** The core's decision on an attempt that has ended (and whose transport is closed). */
export const decided = (shell: Shell, id: number): Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>> =>
  Effect.suspend(() => {
    const next = shell.connection.attemptEnded(id, shell.now())
    return next.replayDropped > 0
      ? Effect.as(Effect.logDebug(ConnectionShell.replayDroppedLog(next.replayDropped)), next)
      : Effect.succeed(next)
  })
