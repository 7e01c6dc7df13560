/**
 * What a runner observed, as plain records, and the one function that says which of a scenario's
 * expectations did not hold. A runner maps its edition's events, states and errors to these
 * records; everything checked is checked here, once for both editions.
 */
import type { Expectation, HttpExpectation, ReplayExpectation, WatcherExpectation } from "./scenario.js"
import type { Recorded } from "./witness.js"

/** An event received, keep-alives (`Heartbeat`, `Connected`) aside. */
export interface SeenEvent {
  /** The event's `_tag`. */
  readonly tag: string
  /** `ActionRun.content`, `ThoughtsAndMemories.thought`, `Unrecognized.event`; else absent. */
  readonly text?: string
  /** `ExternalResourceGranted.granted`. */
  readonly granted?: boolean
  /** `ExternalResourceGranted.input`, `null` when none. */
  readonly input?: string | null
  /** `Unrecognized.payload` as JSON. */
  readonly payload?: string
}

/** How a watcher ended. */
export type Ending =
  | { readonly _tag: "Complete"; readonly actions: number }
  | {
    readonly _tag: "Failed"
    /** The failure's `_tag`. */
    readonly tag: string
    /** Every text of the failure a caller could see or log: its message, its string, its fields as JSON. */
    readonly text: string
    /** Its fields that are strings, numbers or booleans. */
    readonly fields: Readonly<Record<string, string | number | boolean>>
  }

/** What one watcher of a session saw. */
export interface Watched {
  readonly events: ReadonlyArray<SeenEvent>
  readonly ending: Ending
  /** The keep-alives (`Heartbeat`, `Connected`) received. */
  readonly keepAlives: number
  /** The requests the program answered. */
  readonly requests: number
  /** The `reconnects` of each `Open` state seen, in order. */
  readonly opens: ReadonlyArray<number>
  /** The `Reconnecting` states seen. */
  readonly reconnecting: number
  /** The `lastError` of each `Reconnecting` state seen, in order (unset: not recorded). */
  readonly reconnectErrors?: ReadonlyArray<string>
  /** The connection's state once the events ended: `Closed`'s reason, or the state's tag. */
  readonly closed: string
}

/** Everything a runner observed of one case. */
export interface Observation {
  readonly first: Watched
  readonly second?: Watched
  /** What the witness recorded, when the scenario put it in front of the simulator. */
  readonly http?: ReadonlyArray<Recorded>
}

/** The numbers `i` of the events whose text matches `pattern` (its first group), in order. */
const numbers = (events: ReadonlyArray<SeenEvent>, tag: string, pattern: RegExp): ReadonlyArray<number> =>
  events.flatMap((event) => {
    if (event.tag !== tag) return []
    const match = pattern.exec(event.text ?? "")
    return match?.[1] === undefined ? [] : [Number(match[1])]
  })

/** The action numbers of the `ActionRun` events, `(action i of n)`, in order. */
export const actionNumbers = (events: ReadonlyArray<SeenEvent>): ReadonlyArray<number> =>
  numbers(events, "ActionRun", /\(action (\d+) of \d+\)/)

/** The step numbers of the `ThoughtsAndMemories` events, `Step i of n`, in order. */
export const stepNumbers = (events: ReadonlyArray<SeenEvent>): ReadonlyArray<number> =>
  numbers(events, "ThoughtsAndMemories", /^Step (\d+) of \d+/)

/** `1..n`. */
export const upTo = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i + 1)

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const show = (value: unknown): string => JSON.stringify(value)

/** What of `whole` does not hold: the script of `n` actions exactly once, in order. */
const wholeProblems = (who: string, events: ReadonlyArray<SeenEvent>, n: number): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (events[0]?.tag !== "Started") problems.push(`${who}: the first event is ${show(events[0]?.tag)}, not Started`)
  if (events.at(-1)?.tag !== "Complete") problems.push(`${who}: the last event is ${show(events.at(-1)?.tag)}, not Complete`)
  if (!same(actionNumbers(events), upTo(n))) {
    problems.push(`${who}: actions ${show(actionNumbers(events))}, not ${show(upTo(n))} once each in order`)
  }
  if (!same(stepNumbers(events), upTo(n))) {
    problems.push(`${who}: steps ${show(stepNumbers(events))}, not ${show(upTo(n))} once each in order`)
  }
  return problems
}

const watcherProblems = (who: string, seen: Watched, expected: WatcherExpectation): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const ending = seen.ending._tag === "Complete" ? "Complete" : seen.ending.tag
  if (ending !== expected.ending) {
    const text = seen.ending._tag === "Failed" ? `: ${seen.ending.text.slice(0, 500)}` : ""
    problems.push(`${who}: ended ${ending}, not ${expected.ending}${text}`)
  }
  const tags = seen.events.map((event) => event.tag)
  if (expected.whole !== undefined) problems.push(...wholeProblems(who, seen.events, expected.whole))
  if (expected.tags !== undefined && !same(tags, expected.tags)) {
    problems.push(`${who}: events ${show(tags)}, not ${show(expected.tags)}`)
  }
  if (expected.unrecognized !== undefined) {
    const names = seen.events.flatMap((event) => (event.tag === "Unrecognized" ? [event.text ?? ""] : []))
    if (!same(names, expected.unrecognized)) problems.push(`${who}: unrecognized events ${show(names)}, not ${show(expected.unrecognized)}`)
  }
  if (expected.keepAlives !== undefined && seen.keepAlives !== expected.keepAlives) {
    problems.push(`${who}: ${seen.keepAlives} keep-alives, not ${expected.keepAlives}`)
  }
  for (const [tag, count] of Object.entries(expected.counts ?? {})) {
    const actual = tags.filter((t) => t === tag).length
    if (actual !== count) problems.push(`${who}: ${actual} ${tag} events, not ${count}`)
  }
  if (expected.actions !== undefined) {
    const actions = seen.ending._tag === "Complete" ? seen.ending.actions : undefined
    if (actions !== expected.actions) problems.push(`${who}: the outcome counted ${show(actions)} actions, not ${expected.actions}`)
  }
  if (expected.echoes !== undefined) {
    const echoes = seen.events.flatMap((event) =>
      event.tag === "ExternalResourceGranted" ? [[event.granted ?? null, event.input ?? null]] : []
    )
    if (!same(echoes, expected.echoes)) problems.push(`${who}: the simulator echoed ${show(echoes)}, not ${show(expected.echoes)}`)
  }
  if (expected.actionNumbers !== undefined && !same(actionNumbers(seen.events), expected.actionNumbers)) {
    problems.push(`${who}: actions ${show(actionNumbers(seen.events))}, not ${show(expected.actionNumbers)}`)
  }
  if (expected.stepNumbers !== undefined && !same(stepNumbers(seen.events), expected.stepNumbers)) {
    problems.push(`${who}: steps ${show(stepNumbers(seen.events))}, not ${show(expected.stepNumbers)}`)
  }
  if (expected.requests !== undefined && seen.requests !== expected.requests) {
    problems.push(`${who}: ${seen.requests} requests answered, not ${expected.requests}`)
  }
  if (expected.opens !== undefined && !same(seen.opens, expected.opens)) {
    problems.push(`${who}: opened with reconnects ${show(seen.opens)}, not ${show(expected.opens)}`)
  }
  if (expected.closed !== undefined && seen.closed !== expected.closed) {
    problems.push(`${who}: the connection ended ${show(seen.closed)}, not ${show(expected.closed)}`)
  }
  if (expected.reconnectedFor !== undefined && !(seen.reconnectErrors ?? []).some((error) => error.includes(expected.reconnectedFor ?? ""))) {
    problems.push(`${who}: no reconnect for ${show(expected.reconnectedFor)}: ${show(seen.reconnectErrors ?? [])}`)
  }
  if (expected.neverRetried === true && seen.reconnecting > 0) {
    problems.push(`${who}: reconnected ${seen.reconnecting} times, never expected`)
  }
  const fields = seen.ending._tag === "Failed" ? seen.ending.fields : {}
  for (const [name, value] of Object.entries(expected.errorFields ?? {})) {
    if (fields[name] !== value) problems.push(`${who}: the failure's ${name} is ${show(fields[name])}, not ${show(value)}`)
  }
  for (const [name, bound] of Object.entries(expected.errorFieldsAbove ?? {})) {
    const value = fields[name]
    if (typeof value !== "number" || value <= bound) {
      problems.push(`${who}: the failure's ${name} is ${show(value)}, not above ${bound}`)
    }
  }
  for (const [name, part] of Object.entries(expected.errorFieldsInclude ?? {})) {
    const value = fields[name]
    if (typeof value !== "string" || !value.includes(part)) {
      problems.push(`${who}: the failure's ${name} is ${show(value)}, which does not contain ${show(part)}`)
    }
  }
  return problems
}

/** The creates: `POST` of the sessions path (`/api/v1/sessions`; the documented dialect's `/api/v1sessions`). */
const isCreate = (request: Recorded): boolean => request.method === "POST" && /sessions\/?$/.test(request.path)

const httpProblems = (recorded: ReadonlyArray<Recorded> | undefined, expected: HttpExpectation): ReadonlyArray<string> => {
  if (recorded === undefined) return ["http: the witness recorded nothing (was it started?)"]
  const problems: Array<string> = []
  const creates = recorded.filter(isCreate)
  const statuses = creates.map((request) => request.status)
  if (!same(statuses, expected.createStatuses)) {
    problems.push(`http: creates answered ${show(statuses)}, not ${show(expected.createStatuses)}`)
  }
  const keys = new Set(creates.map((request) => request.idempotencyKey))
  const oneKey = keys.size === 1 && !keys.has(undefined)
  if (oneKey !== expected.oneIdempotencyKey) {
    problems.push(`http: the creates' Idempotency-Keys ${show([...keys])}, one and the same expected: ${expected.oneIdempotencyKey}`)
  }
  const sessions = new Set(creates.flatMap((request) => (request.sessionId === undefined ? [] : [request.sessionId])))
  if (sessions.size !== expected.sessionsCreated) {
    problems.push(`http: ${sessions.size} sessions created (${show([...sessions])}), not ${expected.sessionsCreated}`)
  }
  if (expected.waitedAtLeastMs !== undefined) {
    const refused = creates.findIndex((request) => request.status >= 400)
    const first = creates[refused]
    const next = creates[refused + 1]
    const waited = first !== undefined && next !== undefined ? next.startedAt - first.endedAt : undefined
    if (waited === undefined || waited < expected.waitedAtLeastMs) {
      problems.push(`http: the attempt after the refusal came ${show(waited)} ms after it, not at least ${expected.waitedAtLeastMs}`)
    }
  }
  return problems
}

/**
 * What of `expected` did not hold in `observed`, one line each; empty when the scenario passed.
 * `secrets` are the keys that must never appear in a failure's text.
 */
export const verdict = (
  expected: Expectation,
  observed: Observation,
  secrets: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const problems: Array<string> = [...watcherProblems("first watcher", observed.first, expected.first)]
  if (expected.second !== undefined) {
    if (observed.second === undefined) problems.push("second watcher: never observed")
    else problems.push(...watcherProblems("second watcher", observed.second, expected.second))
  }
  if (expected.togetherWhole !== undefined) {
    const together = [...observed.first.events, ...(observed.second?.events ?? [])]
    problems.push(...wholeProblems("both watchers together", together, expected.togetherWhole))
  }
  if (expected.keyNeverInError) {
    for (const watched of [observed.first, observed.second]) {
      if (watched?.ending._tag !== "Failed") continue
      for (const secret of secrets) {
        if (secret.length > 0 && watched.ending.text.includes(secret)) {
          problems.push(`a key is in the text of the failure ${watched.ending.tag}`)
        }
      }
    }
  }
  if (expected.http !== undefined) problems.push(...httpProblems(observed.http, expected.http))
  return problems
}

/** What a runner observed of a replay scenario (`ReplayScenario`). */
export interface ReplayObservation {
  /** Where the failure came from, when it failed: the replay's layer, or the program. */
  readonly failedIn?: "layer" | "program"
  /** The events the program received, keep-alives aside, in order. */
  readonly events: ReadonlyArray<SeenEvent>
  /** How the program ended. A failure's `fields` hold its `message` too. */
  readonly ending: Ending
  /** The outcome's `response`, when it completed. */
  readonly response?: string
  /** The answers the replay took (`AgentSessionsTest.answers`), as `[granted, input]`; none when the layer failed. */
  readonly answers: ReadonlyArray<readonly [boolean, string | null]>
  /** The session ids connected to (`AgentSessionsTest.connections`). */
  readonly connections: ReadonlyArray<string>
  /** The goals of the creates made (`AgentSessionsTest.sessionsCreated`). */
  readonly created: ReadonlyArray<string>
  /** The replay's `AgentApi.canRetrieve`; absent when the layer failed. */
  readonly canRetrieve?: boolean
}

/**
 * What of a replay scenario's `expected` did not hold in `observed`, one line each; empty when it
 * passed. `secrets` are the keys that must never appear in a failure's text.
 */
export const replayVerdict = (
  expected: ReplayExpectation,
  observed: ReplayObservation,
  secrets: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const { ending } = observed
  const tag = ending._tag === "Complete" ? "Complete" : ending.tag
  if (tag !== expected.ending) {
    const text = ending._tag === "Failed" ? `: ${ending.text.slice(0, 500)}` : ""
    problems.push(`ended ${tag}, not ${expected.ending}${text}`)
  }
  if (expected.failedIn !== undefined && observed.failedIn !== expected.failedIn) {
    problems.push(`failed in ${show(observed.failedIn ?? "nothing")}, not in the ${expected.failedIn}`)
  }
  if (expected.ending === "Complete" && observed.failedIn !== undefined) {
    problems.push(`failed in the ${observed.failedIn}, where it was to complete`)
  }
  if (expected.events !== undefined) {
    const wanted = expected.events
    const matches = observed.events.length === wanted.length &&
      observed.events.every((event, i) => {
        const want = wanted[i]
        return want !== undefined && event.tag === want.tag &&
          (want.text === undefined || event.text === want.text) &&
          (want.payload === undefined || event.payload === want.payload)
      })
    if (!matches) problems.push(`events ${show(observed.events)}, not ${show(wanted)}`)
  }
  if (expected.response !== undefined && observed.response !== expected.response) {
    problems.push(`the outcome's response is ${show(observed.response)}, not ${show(expected.response)}`)
  }
  if (expected.actions !== undefined) {
    const actions = ending._tag === "Complete" ? ending.actions : undefined
    if (actions !== expected.actions) problems.push(`the outcome counted ${show(actions)} actions, not ${expected.actions}`)
  }
  if (expected.answers !== undefined && !same(observed.answers, expected.answers)) {
    problems.push(`the replay took the answers ${show(observed.answers)}, not ${show(expected.answers)}`)
  }
  if (expected.connections !== undefined && !same(observed.connections, expected.connections)) {
    problems.push(`connected to ${show(observed.connections)}, not ${show(expected.connections)}`)
  }
  if (expected.created !== undefined && !same(observed.created, expected.created)) {
    problems.push(`created ${show(observed.created)}, not ${show(expected.created)}`)
  }
  if (expected.canRetrieve !== undefined && observed.canRetrieve !== expected.canRetrieve) {
    problems.push(`canRetrieve is ${show(observed.canRetrieve)}, not ${expected.canRetrieve}`)
  }
  const fields = ending._tag === "Failed" ? ending.fields : {}
  for (const [name, value] of Object.entries(expected.errorFields ?? {})) {
    if (fields[name] !== value) problems.push(`the failure's ${name} is ${show(fields[name])}, not ${show(value)}`)
  }
  for (const [name, texts] of Object.entries(expected.errorFieldsInclude ?? {})) {
    const value = fields[name]
    for (const text of texts) {
      if (typeof value !== "string" || !value.includes(text)) {
        problems.push(`the failure's ${name} is ${show(value)}, which does not contain ${show(text)}`)
      }
    }
  }
  for (const [name, text] of Object.entries(expected.errorFieldsEndWith ?? {})) {
    const value = fields[name]
    if (typeof value !== "string" || !value.endsWith(text)) {
      problems.push(`the failure's ${name} is ${show(value)}, which does not end with ${show(text)}`)
    }
  }
  if (expected.keyNeverInError && ending._tag === "Failed") {
    for (const secret of secrets) {
      if (secret.length > 0 && ending.text.includes(secret)) problems.push(`a key is in the text of the failure ${ending.tag}`)
    }
  }
  return problems
}
