/**
 * A session of the service as an `effect/cluster` entity, keyed by the service's session id: its
 * protocol (`Start`, `Attach`, `Events`, `Respond`, `Status`, `Close`, `Resume`), the same as the
 * Effect 3 cluster edition's, written once for both (`../binding/SessionEntity.ts`), and its layer
 * on Effect 4. The two lines' runners do not share a cluster.
 *
 * @since 0.1.0
 */
import type * as Sharding from "effect/cluster/Sharding"
import type * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import type { AgentApi } from "../../src/AgentApi.js"
import type { AgentSessions } from "../../src/AgentSessions.js"
import type * as EventStream from "../../src/EventStream.js"
import { SessionEntity } from "../binding/SessionEntity.js"
import type * as EventLog from "./EventLog.js"
import * as internal from "./internal/entity.js"

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
  readonly maxIdleTime?: Duration.Input | undefined
}

/**
 * Registers the entity with the runner's `Sharding`: this process runs sessions.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, Sharding.Sharding | AgentSessions | AgentApi | EventLog.EventLog> =>
  SessionEntity.toLayer(internal.make(options), { concurrency: "unbounded", maxIdleTime: options.maxIdleTime })
