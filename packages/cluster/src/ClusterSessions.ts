/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`,
 * `close`; written once for both cluster editions, `binding/ClusterSessions.ts`), and this line's
 * embedded single-runner layer.
 *
 * @since 0.1.0
 */
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Runners from "@effect/cluster/Runners"
import * as Sharding from "@effect/cluster/Sharding"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { type AgentApi } from "effect-agent-session/AgentApi"
import type * as AgentSessions from "effect-agent-session/AgentSessions"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import { type ClusterSessions, layer, type Options } from "../binding/ClusterSessions.js"
import { outcomeOf as outcomeOfLog } from "../binding/internal/clusterSessions.js"
import * as EventLog from "./EventLog.js"
import * as SessionEntity from "./SessionEntity.js"

export * from "../binding/ClusterSessions.js"

/**
 * Options of {@link layerEmbedded}.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedOptions extends Options, SessionEntity.Options, EventLog.Options {
  /**
   * Settings of the single runner's `Sharding`. Default: `entityTerminationTimeout` of 1 second
   * (in memory, nothing survives the process: waiting longer at shutdown gains nothing).
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * The embedded default for one machine: the session entity on a single runner with in-memory
 * message storage and an in-memory log (no database), and the façade (the pieces of
 * `@effect/cluster`'s `TestRunner`, with their settings open). Needs what `AgentSessions` needs
 * (`NodeAgentSessions.layer` provides it). Nothing survives the process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbedded = (
  options: EmbeddedOptions = {}
): Layer.Layer<
  | ClusterSessions
  | Sharding.Sharding
  | Runners.Runners
  | MessageStorage.MessageStorage
  | MessageStorage.MemoryDriver
  | EventLog.EventLog,
  never,
  AgentSessions.AgentSessions | AgentApi
> =>
  layer(options).pipe(
    Layer.provideMerge(SessionEntity.layer(options)),
    Layer.provideMerge(EventLog.layerMemory(options)),
    Layer.provideMerge(
      Sharding.layer.pipe(
        Layer.provideMerge(Runners.layerNoop),
        Layer.provideMerge(MessageStorage.layerMemory),
        Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
      )
    ),
    Layer.provide(ShardingConfig.layer({ entityTerminationTimeout: Duration.seconds(1), ...options.shardingConfig }))
  )

/**
 * The outcome of a session's log, as `AgentSessions` would give it: the `complete` event, the
 * actions counted.
 *
 * @since 0.1.0
 * @category combinators
 */
export const outcomeOf = (
  events: ReadonlyArray<EventLog.LoggedEvent>
): Option.Option<SessionEvent.Complete> => outcomeOfLog(events)
