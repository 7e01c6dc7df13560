/**
 * The names of Effect 4 that the cluster's tests written once for both cluster editions
 * (`shared/`, copied from `packages/cluster/test/shared/`) use where Effect 3 names the same thing
 * differently: this edition's test names (`test/helpers/line.ts`); the Effect 3 cluster's
 * `test/helpers/line.ts` exports the same names, bound to Effect 3.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type { ReplyMailbox } from "../../src/internal/line.js"
import { startServer } from "effect-agent-session-test-support/postgresServer"

export { forkChild, scoped, TestClock, yieldNow } from "../../../test/helpers/line.js"

/** The SDK edition's modules the tests build values with. */
export type * as AgentSessions from "../../../src/AgentSessions.js"
export type * as Answer from "../../../src/Answer.js"
export * as EventStream from "../../../src/EventStream.js"
export * as Session from "../../../src/Session.js"
export type * as SessionEvent from "../../../src/SessionEvent.js"

/** Runs a scoped effect in `scope` (its finalizers run when `scope` closes). */
export const extendScope = (scope: Scope.Scope) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Scope.provide(self, scope)

/** Takes what waits in a reply mailbox (waiting for one element when none does), and whether it has ended. */
export const takeAll = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<readonly [ReadonlyArray<A>, boolean], E> =>
  Queue.takeAll(mailbox).pipe(
    Effect.map((taken): readonly [ReadonlyArray<A>, boolean] => [taken, false]),
    Effect.catchIf(Cause.isDone, () => Effect.succeed([[], true] as const))
  ) as Effect.Effect<readonly [ReadonlyArray<A>, boolean], E>

/** How many elements wait in a reply mailbox (0 once it has ended). */
export const sizeOf = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<number> => Queue.size(mailbox)

/** Waits for a reply mailbox to end (polled: a test's wait). */
export const awaitEnd = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<void, E> =>
  Effect.suspend(() => mailbox.state._tag === "Done" ? Effect.void : Effect.andThen(Effect.yieldNow, awaitEnd(mailbox)))

/** A real PostgreSQL server started in the scope (`url`, `port`), stopped when the scope closes. */
export const startPostgres: Effect.Effect<{ readonly url: string; readonly port: number }, Error, Scope.Scope> = Effect.acquireRelease(
  Effect.tryPromise({ try: startServer, catch: (error) => error instanceof Error ? error : new Error(String(error)) }),
  (server) => Effect.promise(server.stop)
)

/** The SDK's layer for Node (a runner's `AgentSessions`). */
export * as NodeAgentSessions from "../../../src/NodeAgentSessions.js"

/** Runs an effect with its configuration read from `env` (instead of the process's environment). */
export { withEnv } from "../../../test/helpers/line.js"
