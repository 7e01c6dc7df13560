/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`,
 * `close`), the same as the Effect 3 cluster edition's, written once for both
 * (`../binding/ClusterSessions.ts`), and this line's embedded single-runner layer.
 *
 * @since 0.1.0
 */
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type { AgentApi } from "../../src/AgentApi.js"
import type * as AgentSessions from "../../src/AgentSessions.js"
import { type ClusterSessions, layer, type Options } from "../binding/ClusterSessions.js"
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
  /** Settings of the single runner's `Sharding`. Default: `entityTerminationTimeout` of 1 second. */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}

/**
 * The embedded default for one machine: the session entity on a single runner with in-memory
 * message storage and an in-memory log (no database), and the façade (the pieces of
 * `effect/cluster`'s `TestRunner`, with their settings open). Needs what `AgentSessions` needs
 * (`NodeAgentSessions.layer` provides it). Nothing survives the process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbedded = (
  options: EmbeddedOptions = {}
): Layer.Layer<
  ClusterSessions | Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage | EventLog.EventLog,
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
        Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop])
      )
    ),
    Layer.provide(ShardingConfig.layer({ entityTerminationTimeout: Duration.seconds(1), ...options.shardingConfig }))
  )
