/**
 * The cluster's session façade (`start`, `attach`, `events`, `respond`, `status`, `outcome`,
 * `close`) and the embedded single-runner layer: written once for both cluster editions
 * (`binding/ClusterSessions.ts`); and `outcomeOf`.
 *
 * @since 0.1.0
 */
import type * as Option from "effect/Option"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import { outcomeOf as outcomeOfLog } from "../binding/internal/clusterSessions.js"
import type * as EventLog from "./EventLog.js"

export * from "../binding/ClusterSessions.js"

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
