/**
 * The simulator's scripted agent: the events a session sends, computed from the session's goal,
 * start URL, `max_actions` and the scenario, with no randomness. The simulator sends exactly these
 * events (plus the injected faults and the observed dialect's `connected`/`heartbeat`, which are
 * not part of the script), so a test can compare what a client received with {@link events}.
 *
 * The script of a session that asks (`ask: "input"` or `"permission"`) is known in two parts: the
 * events up to and including the `external_resource_requested` event, and, once the answer has
 * arrived, the `external_resource_granted` echo of that answer, a `thoughts_and_memories` event that
 * mentions it, the remaining actions and `complete`.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import { ActionSessionId, SessionId } from "effect-agent-session/Session"
import type * as Wire from "effect-agent-session/Wire"

/**
 * What the agent asks in the middle of its run: nothing, an input (`request_user_input` for the
 * field `email`) or a permission (`admin_permission_request`).
 *
 * @since 0.1.0
 * @category models
 */
export type Ask = "none" | "input" | "permission"

/**
 * Everything a script depends on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly sessionId: string
  readonly goal: string
  readonly startUrl: string
  readonly maxActions: number
  /** The actions the agent would like to run; it runs `min(actions, maxActions)`. */
  readonly actions: number
  readonly ask: Ask
  /** How many actions run before the request (with `ask`). Default half of them. */
  readonly askAfter?: number | undefined
  /**
   * The `exceedMaxActions` fault: when above 0, the agent ignores its budget and runs
   * `maxActions + extraActions` actions. Default 0.
   */
  readonly extraActions?: number | undefined
  /**
   * Benchmarks: when set, the script is `started`, `browser_started`, this many `action_run`
   * events and `complete` (no thoughts, no request). Not capped by `maxActions`.
   */
  readonly bulkActions?: number | undefined
  /** Whether `complete` carries `cost_summary` (observed dialect). Default false. */
  readonly costSummary?: boolean | undefined
  /** Whether the script ends with `complete` (false for the `closeBeforeComplete` fault). Default true. */
  readonly complete?: boolean | undefined
  /** The `action_session_id` of the events. Default {@link actionSessionIdOf} the session id. */
  readonly actionSessionId?: string | undefined
}

/**
 * A read-only sequence of events, possibly computed on demand (bulk scripts are never stored).
 *
 * @since 0.1.0
 * @category models
 */
export interface Segment {
  readonly length: number
  readonly at: (index: number) => SessionEvent.SessionEvent
}

/**
 * A session's script: `head` is known at once (it ends with the request when the agent asks);
 * `tail(answer)` is what follows the answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly head: Segment
  /** The request that ends `head`, when the agent asks. */
  readonly request: Option.Option<SessionEvent.ExternalResourceRequested>
  /** The events after the answer (empty when the agent does not ask). */
  readonly tail: (answer: Wire.AnswerData) => ReadonlyArray<SessionEvent.SessionEvent>
  /** The number of `action_run` events of the whole script. */
  readonly actions: number
  /** `actions * 0.01`, rounded to cents. */
  readonly totalCost: number
}

/**
 * The cost of one action.
 *
 * @since 0.1.0
 * @category models
 */
export const costPerAction = 0.01

const actionNames = ["navigate", "click", "type", "scroll", "extract", "submit", "wait_for"] as const
const responseTypes = ["STRING", "MARKDOWN", "JSON"] as const

/** FNV-1a: a small deterministic hash of the goal, to vary the script between goals. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const hostOf = (url: string): string => (URL.canParse(url) ? new URL(url).host : url)

const round2 = (n: number): number => Math.round(n * 100) / 100

const arraySegment = (events: ReadonlyArray<SessionEvent.SessionEvent>): Segment => ({
  length: events.length,
  at: (index) => events[index] as SessionEvent.SessionEvent
})

/**
 * The `content` of the `n`-th bulk action (1-based): `bulk action <n>` (plain ASCII, never escaped
 * in JSON, so a transport may splice it into a frame template).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bulkContent = (n: number): string => `bulk action ${n}`

/**
 * The action session id of a session's browser: derived from the session id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const actionSessionIdOf = (sessionId: string): ActionSessionId =>
  ActionSessionId.make(`as_${sessionId.replace(/^ses_/, "")}`)

/**
 * Builds the plan of a session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plan = (input: Input): Plan => {
  const sessionId = SessionId.make(input.sessionId)
  const actionSessionId = input.actionSessionId === undefined
    ? actionSessionIdOf(input.sessionId)
    : ActionSessionId.make(input.actionSessionId)
  const seed = hash(input.goal)
  const host = hostOf(input.startUrl)
  const withComplete = input.complete !== false
  const started: SessionEvent.Started = { _tag: "Started", sessionId, start_url: input.startUrl }
  const browserStarted: SessionEvent.BrowserStarted = {
    _tag: "BrowserStarted",
    url: input.startUrl,
    action_session_id: actionSessionId
  }
  const complete = (actions: number, response: string, type: SessionEvent.ResponseType): SessionEvent.Complete => {
    const totalCost = round2(actions * costPerAction)
    return {
      _tag: "Complete",
      response,
      type,
      total_cost: Option.some(totalCost),
      cost_summary: input.costSummary === true ? Option.some({ total_cost: totalCost, actions }) : Option.none(),
      session_id: sessionId
    }
  }

  if (input.bulkActions !== undefined) {
    const bulk = Math.max(0, Math.floor(input.bulkActions))
    const last = complete(bulk, `Ran ${bulk} actions for "${input.goal}".`, "STRING")
    const length = 2 + bulk + (withComplete ? 1 : 0)
    return {
      head: {
        length,
        at: (index) =>
          index === 0
            ? started
            : index === 1
            ? browserStarted
            : index < bulk + 2
            ? { _tag: "ActionRun", name: "bulk", action_session_id: actionSessionId, content: bulkContent(index - 1) }
            : last
      },
      request: Option.none(),
      tail: () => [],
      actions: bulk,
      totalCost: last.total_cost.pipe(Option.getOrElse(() => 0))
    }
  }

  const extra = Math.max(0, Math.floor(input.extraActions ?? 0))
  const actions = extra > 0
    ? input.maxActions + extra
    : Math.max(0, Math.min(Math.floor(input.actions), input.maxActions))
  const askAfter = input.askAfter === undefined
    ? Math.floor(actions / 2)
    : Math.max(0, Math.min(Math.floor(input.askAfter), actions))
  const step = (i: number): ReadonlyArray<SessionEvent.SessionEvent> => {
    const name = actionNames[(seed + i) % actionNames.length] ?? "navigate"
    return [
      {
        _tag: "ThoughtsAndMemories",
        thought: `Step ${i + 1} of ${actions} toward "${input.goal}": ${name} next.`,
        memory: i === 0 ? `Opened ${host}.` : `Completed ${i} of ${actions} actions on ${host}.`
      },
      {
        _tag: "ActionRun",
        name,
        action_session_id: actionSessionId,
        content: `${name} on ${host} (action ${i + 1} of ${actions})`
      }
    ]
  }
  const responseType = responseTypes[seed % responseTypes.length] ?? "STRING"
  const response = responseType === "JSON"
    ? JSON.stringify({ goal: input.goal, start_url: input.startUrl, actions })
    : responseType === "MARKDOWN"
    ? `## Done\n\n- goal: ${input.goal}\n- site: ${host}\n- actions: ${actions}`
    : `Finished "${input.goal}" on ${host} in ${actions} actions.`
  const ending: ReadonlyArray<SessionEvent.SessionEvent> = withComplete
    ? [complete(actions, response, responseType)]
    : []

  const head: Array<SessionEvent.SessionEvent> = [started, browserStarted]
  for (let i = 0; i < askAfter; i++) head.push(...step(i))
  const rest: Array<SessionEvent.SessionEvent> = []
  for (let i = askAfter; i < actions; i++) rest.push(...step(i))

  if (input.ask === "none") {
    return {
      head: arraySegment([...head, ...rest, ...ending]),
      request: Option.none(),
      tail: () => [],
      actions,
      totalCost: round2(actions * costPerAction)
    }
  }

  const request: SessionEvent.ExternalResourceRequested = input.ask === "input"
    ? {
      _tag: "ExternalResourceRequested",
      resource_type: "request_user_input",
      reason: `An email address is needed to continue "${input.goal}" on ${host}.`,
      action_session_id: actionSessionId,
      field_name: Option.some("email")
    }
    : {
      _tag: "ExternalResourceRequested",
      resource_type: "admin_permission_request",
      reason: `Permission is needed to submit on ${host} for "${input.goal}".`,
      action_session_id: actionSessionId,
      field_name: Option.none()
    }
  head.push(request)
  return {
    head: arraySegment(head),
    request: Option.some(request),
    tail: (answer) => {
      const input_ = answer.granted && answer.input !== undefined ? Option.some(answer.input) : Option.none<string>()
      const granted: SessionEvent.ExternalResourceGranted = {
        _tag: "ExternalResourceGranted",
        granted: answer.granted,
        input: input_
      }
      const thought: SessionEvent.ThoughtsAndMemories = {
        _tag: "ThoughtsAndMemories",
        thought: answer.granted
          ? Option.match(input_, {
            onNone: () => `The request was granted; continuing with "${input.goal}".`,
            onSome: (value) => `The request was granted with input "${value}"; continuing with "${input.goal}".`
          })
          : `The request was denied; continuing with "${input.goal}" without it.`,
        memory: `${SessionEvent.resourceTypeRaw(request.resource_type)} was ${answer.granted ? "granted" : "denied"}.`
      }
      return [granted, thought, ...rest, ...ending]
    },
    actions,
    totalCost: round2(actions * costPerAction)
  }
}

/**
 * The events of a session's script: everything when the agent does not ask; with a request, the
 * events up to and including it, or the whole script when `answer` is given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const events = (input: Input, answer?: Wire.AnswerData): ReadonlyArray<SessionEvent.SessionEvent> => {
  const p = plan(input)
  const out: Array<SessionEvent.SessionEvent> = []
  for (let i = 0; i < p.head.length; i++) out.push(p.head.at(i))
  if (answer !== undefined && Option.isSome(p.request)) out.push(...p.tail(answer))
  return out
}
