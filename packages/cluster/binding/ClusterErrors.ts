/**
 * The errors only the cluster edition raises: {@link ClusterUnavailable} and
 * {@link EventLogError}, their union {@link ClusterError}, its `Schema` and guard. They appear in
 * the signatures of this entry point only; the core's `Errors.AgentSessionError` does not name
 * them, so an application without the cluster never has to handle them. A cluster application
 * that wants one type has {@link ClusterSessionsError}. This module loads none of the cluster's
 * packages: it can be imported on its own (`effect-agent-session-cluster/ClusterErrors`), as the
 * command line does to tell these errors apart without them. Written once for both cluster
 * editions (the Effect 4 edition's `effect-agent-session-effect4/cluster/ClusterErrors` is the
 * same text bound to Effect 4): the same tags, fields and messages on both lines.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { type AgentSessionError, literals, union } from "../src/internal/lineSchema.js"

/**
 * The `Symbol.for` key that marks the cluster edition's errors.
 *
 * @since 0.1.0
 * @category guards
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-session/cluster/ClusterError")

/**
 * @since 0.1.0
 * @category guards
 */
export type TypeId = typeof TypeId

/**
 * The cluster could not carry a call: no runner owns the session's shard yet, a runner went away
 * mid-call, or its storage failed, after the retries of `ClusterSessions.Options.retry`.
 *
 * @example
 * ```ts
 * import { ClusterErrors } from "effect-agent-session-cluster"
 *
 * new ClusterErrors.ClusterUnavailable({ operation: "events", sessionId: "ses_1", message: "no runner" })
 * ```
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
 * The event log's store (PostgreSQL, or memory) failed: the database is unreachable, or a
 * statement failed.
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
 * No session has this id in the cluster: its log has no record of it (no `Start` or `Attach`
 * reached it) within `ClusterSessions.Options.notFoundAfter`, or the id is one no session can
 * have (empty, or with surrounding spaces).
 *
 * @example
 * ```ts
 * import { ClusterErrors } from "effect-agent-session-cluster"
 *
 * new ClusterErrors.SessionNotFound({ sessionId: "ses_1", message: "no session \"ses_1\" in the cluster" })
 * ```
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
 * A process of the cluster cannot start with the cluster secret it was given: a runner would
 * listen beyond loopback with none (`Missing`), a secret is shorter than 16 characters
 * (`TooShort`), or more than 8 are given at once (`TooMany`). The message names the setting,
 * never a secret. Raised when `NodeClusterSessions.layerRunner` or `layerClient` is built; not a
 * {@link ClusterError} (no call can fail with it).
 *
 * @example
 * ```ts
 * import { ClusterErrors } from "effect-agent-session-cluster"
 *
 * new ClusterErrors.ClusterSecretError({ reason: "Missing", message: "set CLUSTER_SECRET" })
 * ```
 *
 * @since 0.3.0
 * @category errors
 */
export class ClusterSecretError extends Schema.TaggedError<ClusterSecretError>(
  "effect-agent-session/cluster/ClusterSecretError"
)("ClusterSecretError", {
  reason: literals(["Missing", "TooShort", "TooMany"]),
  message: Schema.String
}) {}

/**
 * The errors of the cluster edition.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClusterError = ClusterUnavailable | SessionNotFound | EventLogError

/**
 * The `Schema` of {@link ClusterError}: encodes either to JSON and back.
 *
 * @since 0.1.0
 * @category errors
 */
export const ClusterError = union([ClusterUnavailable, SessionNotFound, EventLogError])

/**
 * Every error a cluster application can meet: the core's and the cluster's.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClusterSessionsError = AgentSessionError | ClusterError

/**
 * Whether a value is one of the cluster edition's errors.
 *
 * @since 0.1.0
 * @category guards
 */
export const isClusterError = (u: unknown): u is ClusterError => Predicate.hasProperty(u, TypeId)
