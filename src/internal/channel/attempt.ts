/**
 * One attempt of a connection, run in the connection's fiber: the core begins it, the key is read
 * afresh, the transport starts in a scope of the attempt's own; the fiber waits for it to open
 * (then publishes the state), waits for it to end, closes its scope, and hands the core's decision
 * (end, or retry on which schedule) to the loop.
 *
 * No wrapper stays on the fiber's stack while it waits: the scope is closed and the
 * `EventStream.attempt` span ended by hand (src/internal/README.md, "One connection").
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { Connection } from "effect-agent-session-core"
import { ConnectionShell } from "effect-agent-session-core/shell"
import type * as Credentials from "../../Credentials.js"
import type { ConnectTimeout, EventStreamError } from "../../Errors.js"
import { AttemptHooks, type Shell } from "./shell.js"
import * as Spans from "../../../binding/internal/channel/spans.js"
import { Fatal, type Transport } from "./transport.js"

/** What every attempt of a connection shares. */
interface AttemptOptions {
  readonly shell: Shell
  readonly printableUrl: string
  readonly credentials: Credentials.Credentials["Type"]
  readonly agent: Credentials.AgentKeyRef | string | undefined
  readonly transport: Transport
  /** Publishes an open (the state, the reconnect count). */
  readonly opened: (report: Connection.OpenReport) => Effect.Effect<void>
}

/**
 * Starts an attempt and runs it until it has opened (or ended): the part written as a generator,
 * which is over before the long wait. Returns the attempt, or its id when it never started.
 */
const startAttempt = (options: AttemptOptions): Effect.Effect<AttemptHooks | number> =>
  Effect.gen(function*() {
    const { shell } = options
    const { connection } = shell
    const id = shell.begin()
    const span = yield* Spans.make("EventStream.attempt", {
      sessionId: shell.sessionId,
      attempt: connection.attemptNumber,
      url: options.printableUrl
    })
    const key = yield* Effect.either(options.credentials.keyFor("connect", options.agent))
    if (Either.isLeft(key)) {
      Spans.end(span, shell.clock, Exit.fail(key.left))
      shell.closed(id, Fatal(key.left, "failed"))
      return id
    }
    const scope = yield* Scope.make()
    const attempt = new AttemptHooks(shell, id, key.right, scope)
    shell.current = attempt
    shell.runtime = yield* Effect.runtime<never>()
    yield* Scope.addFinalizerExit(scope, (exit) => Effect.sync(() => Spans.end(span, shell.clock, exit)))
    yield* Scope.extend(options.transport(attempt), scope)
    yield* attempt.wait(false)
    // An attempt that opened is open for the loop even if it has ended already (opened,
    // delivered and dropped before this fiber woke up): its state and count.
    if (attempt.opened) yield* options.opened(connection.lastOpen)
    return attempt
  })

/** After the attempt ended: its scope closed, what the core decides. */
const endAttempt = (shell: Shell, attempt: AttemptHooks): Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>> =>
  Effect.zipRight(
    // Uninterruptible: a close by the caller while the scope's finalizers run (waiting for the
    // writer or the SSE reader to stop) must not skip the rest of them (the socket's close).
    // The scope closes with the attempt's ending (a recorder's tap reads it).
    Effect.uninterruptible(Scope.close(attempt.scope, Exit.succeed(shell.connection.endingOf(attempt.id)))),
    ended(shell, attempt.id)
  )

const ended = (shell: Shell, id: number): Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>> =>
  Effect.suspend(() => {
    const next = shell.connection.attemptEnded(id, shell.now())
    return next.replayDropped > 0
      ? Effect.as(
        Effect.logDebug(ConnectionShell.replayDroppedLog(next.replayDropped)),
        next
      )
      : Effect.succeed(next)
  })

/**
 * Runs an attempt to its end: the core's decision. The long wait (the attempt open) holds one
 * continuation on the fiber's stack, not a generator.
 */
export const runAttempt = (options: AttemptOptions): Effect.Effect<Connection.Next<EventStreamError, ConnectTimeout>> =>
  Effect.flatMap(
    startAttempt(options),
    (started) =>
      typeof started === "number"
        ? ended(options.shell, started)
        : Effect.flatMap(started.wait(true), () => endAttempt(options.shell, started))
  )
