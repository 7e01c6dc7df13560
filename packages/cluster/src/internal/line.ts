/**
 * The names of Effect 3 that the cluster's binding (`binding/`, code written once for both cluster
 * editions) uses where Effect 4 names the same thing differently, and the modules it takes from
 * this line (the cluster's, the RPC's and the SDK edition's). The Effect 4 cluster edition's
 * `internal/line.ts` exports the same names, bound to Effect 4: a binding module imports them from
 * here (`../src/internal/line.js`, relative to where its copy lies).
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import type * as ConfigErrorModule from "effect/ConfigError"
import type * as Redacted from "effect/Redacted"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as ShardingConfigModule from "@effect/cluster/ShardingConfig"
import type * as MessageStorageModule from "@effect/cluster/MessageStorage"
import type * as RunnerStorageModule from "@effect/cluster/RunnerStorage"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import type * as SqlClientModule from "@effect/sql/SqlClient"
import type { MigrationError } from "@effect/sql/Migrator"
import { SqlError as SqlErrorClass, type SqlError as SqlErrorType } from "@effect/sql/SqlError"

import type { ReplyWriter } from "../../binding/internal/replyWriter.js"

export * from "./lineSchema.js"

/** The cluster's entities. */
export * as Entity from "@effect/cluster/Entity"
export * as EntityId from "@effect/cluster/EntityId"
/** The cluster's annotations of a message (`Persisted`, ...). */
export * as ClusterSchema from "@effect/cluster/ClusterSchema"
/** The cluster's sharding service, its settings and the pieces of a single runner. */
export * as Sharding from "@effect/cluster/Sharding"
export * as ShardId from "@effect/cluster/ShardId"
export * as ShardingConfig from "@effect/cluster/ShardingConfig"
export * as MessageStorage from "@effect/cluster/MessageStorage"
export * as RunnerHealth from "@effect/cluster/RunnerHealth"
export * as Runners from "@effect/cluster/Runners"
export * as RunnerStorage from "@effect/cluster/RunnerStorage"
/** RPC definitions (an entity's protocol). */
export * as Rpc from "@effect/rpc/Rpc"
/** The SDK edition's modules the cluster builds on. */
export * as AgentApi from "effect-agent-session/AgentApi"
export * as AgentSessions from "effect-agent-session/AgentSessions"
export * as EventStream from "effect-agent-session/EventStream"
export * as Answer from "effect-agent-session/Answer"
export * as Errors from "effect-agent-session/Errors"
export * as Session from "effect-agent-session/Session"
export * as SessionEvent from "effect-agent-session/SessionEvent"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The `Duration` of an input. */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.decode

/** Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. */
export const ServiceTag = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** An `Option` of a value that may be `null` or `undefined`. */
export const optionFromNullish: <A>(value: A) => Option.Option<NonNullable<A>> = Option.fromNullable

/** The first failure of a cause, if it has one. */
export const failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.failureOption

/** Fails with `onTimeout()` when `self` takes longer than `duration` (interrupting it). */
export const timeoutFail = <E2>(duration: DurationInput, onTimeout: () => E2) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
  Effect.timeoutFail(self, { duration, onTimeout })

/** Recovers from every failure of an effect (its whole cause). */
export const catchAllCause: <E, A2, E2, R2>(
  f: (cause: Cause.Cause<E>) => Effect.Effect<A2, E2, R2>
) => <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A | A2, E2, R | R2> = Effect.catchAllCause

/** Fails a stream with `onTimeout()` when it emits nothing for `duration`. */
export const streamTimeoutFail = <E2>(duration: DurationInput, onTimeout: () => E2) =>
<A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E | E2, R> => Stream.timeoutFail(self, onTimeout, duration)

/** Recovers from every failure of a stream (its whole cause). */
export const streamCatchAllCause = <E, A2, E2, R2>(f: (cause: Cause.Cause<E>) => Stream.Stream<A2, E2, R2>) =>
<A, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A | A2, E2, R | R2> => Stream.catchAllCause(self, f)

/** A schedule that stops once `duration` has passed since its first step. */
export const upTo = (duration: DurationInput) =>
<Out, In, R>(self: Schedule.Schedule<Out, In, R>): Schedule.Schedule<Out, In, R> => Schedule.upTo(self, duration)

/** Retries an effect on `schedule` while its failure satisfies `retryable`. */
export const retryWhile = <E>(schedule: Schedule.Schedule<unknown, unknown>, retryable: (error: E) => boolean) =>
<A, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(self, Schedule.whileInput(schedule, retryable))

/** Recovers from every typed failure of an effect. */
export const catchAll: <E, A2, E2, R2>(
  f: (error: E) => Effect.Effect<A2, E2, R2>
) => <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A | A2, E2, R | R2> = Effect.catchAll

/** The layer of the services an effect builds in the layer's scope. */
export const scopedContextLayer = <A, E, R>(
  effect: Effect.Effect<Context.Context<A>, E, R>
): Layer.Layer<A, E, Exclude<R, Scope.Scope>> => Layer.scopedContext(effect)

/** The settings of a runner's `Sharding` (`ShardingConfig`'s service). */
export type ShardingSettings = ShardingConfigModule.ShardingConfig["Type"]

/** The layer an effect makes, built in the layer's scope. */
export const unwrapScopedLayer: <A, E1, R1, E, R>(
  self: Effect.Effect<Layer.Layer<A, E1, R1>, E, R>
) => Layer.Layer<A, E | E1, R1 | Exclude<R, Scope.Scope>> = Layer.unwrapScoped

/** A layer that runs an effect in its scope and provides nothing. */
export const scopedDiscardLayer: <X, E, R>(effect: Effect.Effect<X, E, R>) => Layer.Layer<never, E, Exclude<R, Scope.Scope>> =
  Layer.scopedDiscard

/** The fiber of a run forked by {@link forkDaemon}. */
export type RunFiber<A, E = never> = Fiber.RuntimeFiber<A, E>

/** Runs an effect in a fiber of its own, outside the caller's scope (it outlives the caller). */
export const forkDaemon: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<RunFiber<A, E>, never, R> = Effect.forkDaemon

/**
 * Runs an effect so that interrupting it returns at once, the effect going on in the background
 * (a read of the store that a time-out gives up on).
 */
export const disconnect: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = Effect.disconnect

/** Completes a `Deferred` with an effect, outside any fiber. */
export const doneDeferredUnsafe: <A, E>(self: Deferred.Deferred<A, E>, effect: Effect.Effect<A, E>) => void =
  Deferred.unsafeDone

/** Exponential from `base` (factor 2), each delay at most `cap`, at most `times` recurrences. */
export const cappedExponential = (base: DurationInput, cap: DurationInput, times: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.exponential(base, 2).pipe(Schedule.union(Schedule.spaced(cap)), Schedule.intersect(Schedule.recurs(times)))

/** What an entity's streaming handler returns: a mailbox the RPC server takes from. */
export type ReplyMailbox<A, E> = Mailbox.ReadonlyMailbox<A, E>

/** The writer's side of a {@link ReplyMailbox} (the binding's `internal/replyWriter.ts`). */
export type { ReplyWriter } from "../../binding/internal/replyWriter.js"

/** A reply mailbox and its writer. */
export const makeReplyMailbox = <A, E>(): Effect.Effect<{ readonly mailbox: ReplyMailbox<A, E>; readonly writer: ReplyWriter<A, E> }> =>
  Effect.map(Mailbox.make<A, E>(), (mailbox) => ({
    mailbox,
    writer: {
      offerAll: (values) => void mailbox.unsafeOfferAll(values),
      offer: (value) => void mailbox.unsafeOffer(value),
      done: (exit) => void mailbox.unsafeDone(exit),
      size: () => Option.getOrElse(mailbox.unsafeSize(), () => 0)
    }
  }))

/** The SQL client, its connections and migrator (`@effect/sql`), and PostgreSQL's client (`@effect/sql-pg`). */
export * as SqlClient from "@effect/sql/SqlClient"
export type * as SqlConnection from "@effect/sql/SqlConnection"
export type { SqlError } from "@effect/sql/SqlError"
export * as Migrator from "@effect/sql/Migrator"
export * as PgClient from "@effect/sql-pg/PgClient"

/** Whether a migration's failure is another process holding the migration lock (or a failure of SQL, retried too). */
export const isMigrationLocked = (error: MigrationError | SqlErrorType): boolean =>
  error._tag === "MigrationError" ? error.reason === "locked" : true

/** Every `interval`, at most `times` recurrences. */
export const spacedTimes = (interval: DurationInput, times: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.spaced(interval).pipe(Schedule.intersect(Schedule.recurs(times)))

/** The cluster's message storage in SQL (`@effect/cluster`'s `SqlMessageStorage`). */
export const sqlMessageStorage: Layer.Layer<
  MessageStorageModule.MessageStorage,
  never,
  SqlClientModule.SqlClient | ShardingConfigModule.ShardingConfig
> = SqlMessageStorage.layer

/** The cluster's runner storage (runners, shard locks) in SQL (`@effect/cluster`'s `SqlRunnerStorage`). */
export const sqlRunnerStorage: Layer.Layer<
  RunnerStorageModule.RunnerStorage,
  SqlErrorType,
  SqlClientModule.SqlClient | ShardingConfigModule.ShardingConfig
> = SqlRunnerStorage.layer

/** A configuration of one environment variable, its value `Redacted`. */
export const redactedConfig = (name: string): Config.Config<Redacted.Redacted<string>> => Config.redacted(name)

/** A configuration that could not be read (a variable missing or malformed). */
export type ConfigError = ConfigErrorModule.ConfigError

/** Whether a failure is an `Effect.timeout`'s. */
export const isTimeout: (u: unknown) => boolean = Cause.isTimeoutException

/** The cluster's runner over sockets, and Node's socket transport of it. */
export * as SocketRunner from "@effect/cluster/SocketRunner"
export * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"

/** A failure of SQL with a message of ours (and what caused it). */
export const sqlError = (message: string, cause?: unknown): SqlErrorType => new SqlErrorClass({ message, cause })
