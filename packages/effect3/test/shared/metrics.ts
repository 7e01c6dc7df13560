/**
 * The metrics tests' events and reading, written once for both editions.
 */
import * as Option from "effect/Option"
import * as Metrics from "../../src/Metrics.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { ActionSessionId, SessionId } from "../../src/Session.js"

/** The `n`th action of a run. */
export const action = (n: number): SessionEvent.SessionEvent => ({
  _tag: "ActionRun",
  name: `step-${n}`,
  action_session_id: ActionSessionId.make("as-1"),
  content: `doing ${n}`
})

/** A thought. */
export const thought: SessionEvent.SessionEvent = { _tag: "ThoughtsAndMemories", thought: "hmm", memory: "" }

/** The end of a run. */
export const complete: SessionEvent.SessionEvent = {
  _tag: "Complete",
  response: "done",
  type: "STRING",
  total_cost: Option.some(1),
  cost_summary: Option.none(),
  session_id: SessionId.make("s-1")
}

/**
 * The count of received events of a tag. Counters outlive a test (global to the process, or to
 * the test run): every assertion compares a delta.
 */
export const eventCount = (tag: string) => Metrics.counterValue("agent_session_events_received_total", { event: tag })

/** The count of HTTP attempts or retries of the tests' operation with a status. */
export const httpCount = (name: string, status: string) => Metrics.counterValue(name, { operation: "test-op", status })
