/**
 * The cluster edition's own errors: `ClusterUnavailable` (the cluster could not carry a call),
 * `SessionNotFound` (no session has this id in the cluster) and `EventLogError` (the sessions'
 * event log failed); their union, `Schema` and guard. The same tags and fields as the Effect 3
 * cluster edition's (`effect-agent-session-cluster/ClusterErrors`).
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { AgentSessionError } from "../Errors.js"

/**
 * Marks every error of the cluster edition.
 *
 * @since 0.1.0
 * @category models
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-session/cluster/ClusterError")

/**
 * @since 0.1.0
 * @category models
 */
export type TypeId = typeof TypeId

/**
 * The cluster could not carry a call (no runner for the session's shard yet, a mailbox full, the
 * message storage failing) after the façade's retries, or the runner went silent.
 *
 * @since 0.1.0
 * @category errors
 */
export class ClusterUnavailable extends Schema.TaggedError<ClusterUnavailable>(
  "effect-agent-session/ClusterUnavailable"
)("ClusterUnavailable", {
  /** The `ClusterSessions` operation, such as `events`. */
  operation: Schema.String,
  /** The session it was for. */
  sessionId: Schema.String,
  message: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * The sessions' event log failed (a store error), or refused a write (a sequence number taken).
 *
 * @since 0.1.0
 * @category errors
 */
export class EventLogError extends Schema.TaggedError<EventLogError>("effect-agent-session/EventLogError")(
  "EventLogError",
  {
    /** The log operation, such as `append`. */
    operation: Schema.String,
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * No session has this id in the cluster (none was started or attached with it, within the
 * façade's `notFoundAfter`), or no session can have it (empty, or with surrounding spaces).
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>("effect-agent-session/cluster/SessionNotFound")(
  "SessionNotFound",
  {
    sessionId: Schema.String,
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Every error of the cluster edition.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClusterError = ClusterUnavailable | SessionNotFound | EventLogError

/**
 * The schema of {@link ClusterError}.
 *
 * @since 0.1.0
 * @category errors
 */
export const ClusterError = Schema.Union([ClusterUnavailable, SessionNotFound, EventLogError])

/**
 * What a caller of `ClusterSessions` can meet: the SDK's errors and the cluster's.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClusterSessionsError = AgentSessionError | ClusterError

/**
 * Whether a value is an error of the cluster edition.
 *
 * @since 0.1.0
 * @category guards
 */
export const isClusterError = (u: unknown): u is ClusterError => Predicate.hasProperty(u, TypeId)
