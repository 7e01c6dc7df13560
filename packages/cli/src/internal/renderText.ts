/**
 * The text the reporters share (`Render.plain`, `Render.json`, `Render.live`): counts, the bar,
 * the response and the cost of an outcome, the notices of a session that may still run, and the
 * lines that describe requests, answers, connection states, events, outcomes and an interrupted
 * run. Service text in them is made safe for a terminal (`Sanitize.line`, `Sanitize.block`).
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import type { Outcome } from "effect-agent-session/AgentSessions"
import type * as Answer from "effect-agent-session/Answer"
import type { ConnectionState } from "effect-agent-session/EventStream"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type { AnswerSource, Progress } from "./renderTypes.js"
import * as Sanitize from "../Sanitize.js"

/** Service text on one line, safe for a terminal. */
export const clean = Sanitize.line

/** `Render.truncate`: cuts a line to a width, with an ellipsis. */
export const truncate = (text: string, width: number): string => {
  const chars = Array.from(text)
  if (chars.length <= width) return text
  return width <= 1 ? chars.slice(0, width).join("") : chars.slice(0, width - 1).join("") + "…"
}

/** `Render.bar`: a progress bar of `done` against `total`. */
export const bar = (done: number, total: number, width = 24, fill = "█", empty = "░"): string => {
  const ratio = total <= 0 ? 1 : Math.min(1, done / total)
  const filled = Math.round(ratio * width)
  return `[${fill.repeat(filled)}${empty.repeat(width - filled)}] ${done}/${total}`
}

/** `3/8`, or `3` when the session's `max_actions` is not known. */
export const actionCount = (done: number, progress: Progress): string =>
  Option.match(progress.maxActions, { onNone: () => String(done), onSome: (max) => `${done}/${max}` })

/**
 * The actions line beside the cost. The service sends no count of actions, only the cost, and
 * `attach` sees the events from when it connects: a session interrupted and attached to again
 * ran actions this watch never saw. So `attach` says what it counts (`Actions seen: 4 of max 5
 * (this watch only; ...)`) rather than show `4/5` beside the cost of five; a session this command
 * created was watched from its start (no event lost over reconnects), so its count is the session's.
 */
export const actionsLine = (done: number, progress: Progress): string =>
  progress.attached
    ? `Actions seen: ${done}${
      Option.match(progress.maxActions, { onNone: () => "", onSome: (max) => ` of max ${max}` })
    } (this watch only; the cost is the whole session's)`
    : `Actions: ${actionCount(done, progress)}`

/** `3/8 actions`, or `3 of max 8 actions seen by this watch` after `attach` (see {@link actionsLine}). */
export const actionsSoFar = (progress: Progress): string =>
  progress.attached
    ? `${progress.actions}${
      Option.match(progress.maxActions, { onNone: () => "", onSome: (max) => ` of max ${max}` })
    } actions seen by this watch`
    : `${actionCount(progress.actions, progress)} actions`

/** ` (max 8 actions)`, or nothing when it is not known. */
export const maxText = (progress: Progress): string =>
  Option.match(progress.maxActions, { onNone: () => "", onSome: (max) => ` (max ${max} actions)` })

/** `Render.renderResponse`: the response per its type, not yet made safe for a terminal. */
export const renderResponse = (outcome: Pick<Outcome, "response" | "type" | "complete">): string => {
  const type = SessionEvent.responseTypeRaw(outcome.type)
  if (type === "JSON") {
    const parsed = SessionEvent.parseJsonResponse(outcome.complete)
    if (parsed._tag === "Right") return JSON.stringify(parsed.right, null, 2)
  }
  return outcome.response
}

/** `Render.formatCost`: the cost line of an outcome (no unit is assumed). */
export const formatCost = (cost: Option.Option<number>): string =>
  Option.match(cost, { onNone: () => "not reported", onSome: (n) => String(n) })

/** `Render.reattachCommand`: the `attach` command of a session, one line for a POSIX shell. */
export const reattachCommand = (sessionId: string, maxActions: Option.Option<number>): string =>
  `effect-agent-session attach ${Sanitize.shellWord(sessionId)}${
    Option.match(maxActions, { onNone: () => "", onSome: (max) => ` --max-actions ${max}` })
  }`

/** `Render.orphanNotice`: a session that may still be running, and how to reattach. */
export const orphanNotice = (sessionId: string, maxActions: Option.Option<number>): string =>
  `session ${clean(sessionId)} may still be running at the service; reattach with: ${reattachCommand(sessionId, maxActions)}`

/** `Render.createNotice`: a create request sent and not answered, and its `Idempotency-Key`. */
export const createNotice = (idempotencyKey: string): string =>
  `the create request was sent and not answered: a session may have been created (and be paid for); ` +
  `run the same command with --idempotency-key ${Sanitize.shellWord(idempotencyKey)} to get that session ` +
  `from a service that honours Idempotency-Key, rather than a second one`

export const describeRequest = (request: SessionEvent.ExternalResourceRequested): string => {
  const kind = clean(SessionEvent.resourceTypeRaw(request.resource_type))
  const field = Option.match(request.field_name, { onNone: () => "", onSome: (f) => ` [field ${clean(f)}]` })
  return `${kind}${field}: ${clean(request.reason)}`
}

export const describeAnswer = (answer: Answer.Answer, source: AnswerSource): string => {
  const how = source === "flag" ? " (from flags)" : source === "no-terminal" ? " (no terminal to ask: pass --approve or --input)" : ""
  if (answer._tag === "Deny") return `denied${how}`
  return Option.match(answer.input, {
    onNone: () => `granted${how}`,
    onSome: (input) => `granted with input "${clean(input)}"${how}`
  })
}

export const describeState = (state: ConnectionState): Option.Option<string> => {
  switch (state._tag) {
    case "Reconnecting":
      return Option.some(`connection lost, reconnecting (attempt ${state.attempt}): ${clean(state.lastError)}`)
    case "Open":
      return state.reconnects > 0
        ? Option.some(`reconnected (${state.reconnects} so far${
          Option.match(state.downtime, { onNone: () => "", onSome: (d) => `, down ${Duration.format(d)}` })
        })`)
        : Option.none()
    default:
      return Option.none()
  }
}

export const eventLine = (event: SessionEvent.SessionEvent, progress: Progress): Option.Option<string> => {
  switch (event._tag) {
    case "Started":
      return Option.some(`started on ${clean(event.start_url)}`)
    case "BrowserStarted":
      return Option.some(`browser started at ${clean(event.url)}`)
    case "ActionRun":
      return Option.some(`action ${actionCount(progress.actions, progress)}: ${clean(event.name)}: ${clean(event.content)}`)
    case "ThoughtsAndMemories":
      return Option.some(`thought: ${clean(event.thought)}`)
    case "AgentError":
      return Option.some(`agent error: ${clean(event.error)}`)
    case "ExternalResourceRequested":
      return Option.some(`the agent asks (${describeRequest(event)})`)
    case "ExternalResourceGranted":
      return Option.some(`the service says the request was ${event.granted ? "granted" : "denied"}`)
    case "Complete":
      return Option.some("complete")
    case "Connected":
      return Option.some("connected")
    case "Heartbeat":
      return Option.none()
    case "Unrecognized":
      return Option.some(`unrecognized event "${clean(event.event)}"`)
  }
}

/** The outcome: a heading, the response (several lines, made safe), the cost and the actions. */
export const outcomeLines = (outcome: Outcome, progress: Progress): Array<string> => [
  `Outcome (${clean(SessionEvent.responseTypeRaw(outcome.type))}):`,
  Sanitize.block(renderResponse(outcome)),
  "",
  `Total cost: ${formatCost(outcome.totalCost)}`,
  actionsLine(outcome.actions, progress),
  ...Option.match(outcome.budgetExceeded, { onNone: () => [], onSome: (e) => [`Warning: ${clean(e.message)}`] })
]

export const soFarLines = (progress: Progress): Array<string> => {
  if (Option.isSome(progress.creating)) {
    return [
      "Interrupted while creating the session: the create request was sent and not answered.",
      `Idempotency-Key: ${clean(progress.creating.value)}`
    ]
  }
  if (Option.isNone(progress.sessionId)) return ["Interrupted before a session was created."]
  return [
    progress.opened
      ? "Interrupted: the connection was closed (1000)."
      : "Interrupted: the session was created; its event channel had not opened yet.",
    `Session: ${clean(progress.sessionId.value)}`,
    `Done so far: ${actionsSoFar(progress)}, ${progress.events} events, ${progress.reconnects} reconnects`,
    ...Option.match(progress.lastAction, {
      onNone: () => [],
      onSome: (a) => [`Last action: ${clean(a.name)}: ${clean(a.content)}`]
    }),
    ...Option.match(progress.lastThought, { onNone: () => [], onSome: (t) => [`Last thought: ${clean(t)}`] })
  ]
}

// ---------------------------------------------------------------------------
// Plain lines (not a terminal)
// ---------------------------------------------------------------------------
