/**
 * A session of the service as an `@effect/cluster` entity, keyed by the service's session id: its
 * protocol (`Start`, `Attach`, `Events`, `Respond`, `Status`, `Close`, `Resume`; written once for
 * both cluster editions, `binding/SessionEntity.ts`) and its layer on this line, with the runner's
 * resumer, answer watch and writer claims.
 *
 * @since 0.1.0
 */
import type * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { AgentApi } from "effect-agent-session/AgentApi"
import type { AgentSessions } from "effect-agent-session/AgentSessions"
import type * as EventStream from "effect-agent-session/EventStream"
import { SessionEntity } from "../binding/SessionEntity.js"
import * as EventLog from "./EventLog.js"
import { defaultInterval as defaultAnswerCheckInterval, makeAnswerWatch } from "./internal/answerWatch.js"
import * as internal from "./internal/entity.js"
import { makeGate } from "./internal/gate.js"
import { makeRegistry, resumer } from "./internal/resumer.js"
import { makeTicker } from "./internal/ticker.js"
import { makeUnreleased, renewer, writerName } from "./internal/writer.js"

export * from "../binding/SessionEntity.js"

/**
 * Options of the entity's layer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Options of every session's channel. */
  readonly connect?: Omit<EventStream.ConnectOptions, "agent" | "pendingRequests"> | undefined
  /** Idle time before an entity whose run ended is passivated (its log stays). Default 1 minute. */
  readonly maxIdleTime?: Duration.DurationInput | undefined
  /**
   * How often each runner's resumer looks for shards it has gained, and sends `Resume` to their
   * sessions whose run has not ended and that neither run nor start on this runner, once the
   * shard has been held for a second (the engine meanwhile delivers again the `Start` a dead
   * owner had not finished: such a session starts without a `Resume`), so that a session whose
   * runner gave its shard away (rebalancing) or died runs again on the new owner. A subscriber
   * (`Events`) that reaches the new owner first takes the session over itself. Default 250 ms
   * (a look reads nothing from the store unless shards were gained).
   */
  readonly resumeInterval?: Duration.DurationInput | undefined
  /**
   * How often each runner reads the log's answers for the sessions it holds that wait for an
   * answer it has not seen, and hands those it finds to their channels: an answer recorded by a
   * runner that still believed it held the session (frozen past failure detection, its shard
   * moved meanwhile) reaches the session within two intervals. One read per interval for all
   * such sessions of the runner (those waiting less than an interval are not read for); none
   * while no session waits. Default 2 seconds.
   */
  readonly answerCheckInterval?: Duration.DurationInput | undefined
}

/**
 * Registers the entity with the runner's `Sharding`: this process runs sessions. With it comes
 * the runner's resumer: every `resumeInterval` it sends `Resume` to the unended sessions of the
 * shards this runner gained (once held for a second), except those that run or start here
 * already, so that a session whose shard moved (its runner died, or rebalancing between live
 * runners) runs again on the new owner; a subscriber
 * that reaches the new owner before the resumer takes the session over at once. And the
 * runner's answer watch: every `answerCheckInterval` it reads the answers recorded for the
 * sessions it holds that wait for one they have not been given.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, Sharding.Sharding | ShardingConfig.ShardingConfig | AgentSessions | AgentApi | EventLog.EventLog> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const ticker = yield* makeTicker
    const starting = yield* makeGate(internal.startsAtOnce)
    const answers = yield* makeAnswerWatch(options.answerCheckInterval ?? defaultAnswerCheckInterval)
    // The runner's activations, which the resumer reads (it sends no `Resume` to a session that
    // runs or starts here).
    const registry = makeRegistry()
    // The name this runner's activations claim the logs they write by (one writer per log).
    const config = yield* ShardingConfig.ShardingConfig
    const writer = writerName(
      Option.match(config.runnerAddress, { onNone: () => "client", onSome: (a) => `${a.host}:${a.port}` })
    )
    // Shown alive for as long as the runner is: its claims hold while it lives, however long it
    // stalls (a lock of its name on a connection of its own, on PostgreSQL).
    yield* Effect.flatMap(EventLog.EventLog, (log) => log.live(writer))
    const unreleased = makeUnreleased()
    return Layer.mergeAll(
      SessionEntity.toLayer(internal.make(options, ticker, starting, answers, registry, writer, unreleased), {
        concurrency: "unbounded",
        maxIdleTime: options.maxIdleTime
      }),
      Layer.scopedDiscard(Effect.forkScoped(resumer(SessionEntity, options, registry))),
      Layer.scopedDiscard(Effect.forkScoped(renewer(writer, registry, unreleased)))
    )
  }))
