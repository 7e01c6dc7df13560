/**
 * The names of Effect 3 that the cluster's tests written once for both cluster editions
 * (`test/shared/`, copied to the Effect 4 edition's `cluster/test/shared/`) use where Effect 4
 * names the same thing differently; the Effect 4 cluster's `cluster/test/helpers/line.ts` exports
 * the same names, bound to Effect 4.
 */
import { it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { ReplyMailbox } from "../../src/internal/line.js"

/** The SDK edition's modules the tests build values with. */
export { type AgentSessions, type Answer, EventStream, Session, type SessionEvent } from "effect-agent-session"

/** Forks an effect as a child of the current fiber. */
export const forkChild = Effect.fork

/** Gives the scheduler a turn. */
export const yieldNow = (): Effect.Effect<void> => Effect.yieldNow()

/** Runs a scoped effect in `scope` (its finalizers run when `scope` closes). */
export const extendScope = (scope: Scope.Scope) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Scope.extend(self, scope)

/** Takes what waits in a reply mailbox (waiting for one element when none does), and whether it has ended. */
export const takeAll = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<readonly [ReadonlyArray<A>, boolean], E> =>
  Effect.map(mailbox.takeAll, ([chunk, done]) => [Chunk.toReadonlyArray(chunk), done] as const)

/** How many elements wait in a reply mailbox (-1 once it has ended). */
export const sizeOf = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<number> =>
  Effect.map(mailbox.size, Option.getOrElse(() => -1))

/** Waits for a reply mailbox to end. */
export const awaitEnd = <A, E>(mailbox: ReplyMailbox<A, E>): Effect.Effect<void, E> => Effect.asVoid(mailbox.await)

/** The test clock. */
export * as TestClock from "effect/TestClock"

/** A test whose effect has a `Scope` (closed when the test ends). */
export const scoped = it.scoped

/** A real PostgreSQL server started in the scope (`url`, `port`), stopped when the scope closes. */
export { start as startPostgres } from "effect-agent-session-test-support/Postgres"

/** The SDK's layer for Node (a runner's `AgentSessions`). */
export { NodeAgentSessions } from "effect-agent-session"

/** Runs an effect with its configuration read from `env` (instead of the process's environment). */
export const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
