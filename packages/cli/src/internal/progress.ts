/**
 * The progress record of a run (`Render.Progress`): made fresh, updated with each event and each
 * connection state.
 */
import * as Option from "effect/Option"
import type { ConnectionState } from "effect-agent-session/EventStream"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import type { Progress } from "./renderTypes.js"
import { clean } from "./renderText.js"

/** `Render.makeProgress`: a fresh progress record. */
export const makeProgress = (maxActions: number | undefined, options?: { readonly attached?: boolean }): Progress => ({
  sessionId: Option.none(),
  maxActions: Option.fromNullable(maxActions),
  actions: 0,
  events: 0,
  reconnects: 0,
  lastAction: Option.none(),
  lastThought: Option.none(),
  lastError: Option.none(),
  answers: 0,
  connection: "connecting",
  opened: false,
  creating: Option.none(),
  attached: options?.attached ?? false
})

/** `Render.track`: updates the progress with one event. */
export const track = (progress: Progress, event: SessionEvent.SessionEvent): void => {
  progress.events += 1
  switch (event._tag) {
    case "ActionRun":
      progress.actions += 1
      progress.lastAction = Option.some(event)
      break
    case "ThoughtsAndMemories":
      progress.lastThought = Option.some(event.thought)
      break
    case "AgentError":
      progress.lastError = Option.some(event.error)
      break
    default:
      break
  }
}

const stateLabel = (state: ConnectionState): string => {
  switch (state._tag) {
    case "Connecting":
      return "connecting"
    case "Open":
      return "open"
    case "Reconnecting":
      return `reconnecting (attempt ${state.attempt})`
    case "Closed":
      return `closed (${clean(state.reason)})`
  }
}

/** `Render.trackState`: applies a connection state; returns whether it is worth reporting. */
export const trackState = (progress: Progress, state: ConnectionState): boolean => {
  const label = stateLabel(state)
  if (state._tag === "Open") progress.opened = true
  if (label === progress.connection) return false
  progress.connection = label
  if (state._tag === "Open") progress.reconnects = state.reconnects
  return true
}
