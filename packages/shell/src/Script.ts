/**
 * The test kit's scripted world, without I/O: the steps of a script, what one connection playing
 * it emits and when it ends (and with which reason), how the application's answers are matched
 * against the requests it emitted, and the scripted service (onboarded agents, created sessions and
 * their ids, the next failure on demand, what the application did). Each edition's test kit binds
 * it: its queues, streams, deferreds and clock sleeps, its schemas and errors. Decisions are
 * returned as values; the kit's time (`sleep` steps) is the edition's clock.
 *
 * @since 0.1.0
 */
import type { Connection } from "effect-agent-session-core"

/**
 * One step of a script (`E` an event, `F` an error of the event stream, `D` a duration): emit an
 * event, fail the stream, wait, wait for the answer to the latest request (then, with `echo`,
 * emit that it was granted or denied), or end the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type Step<E, F, D> =
  | { readonly _tag: "Emit"; readonly event: E }
  | { readonly _tag: "Fail"; readonly error: F }
  | { readonly _tag: "Sleep"; readonly duration: D }
  | { readonly _tag: "AwaitAnswer"; readonly echo: boolean }
  | { readonly _tag: "End" }

/**
 * The constructors of a script's steps for an edition's events `E`, errors `F` and durations `D`,
 * all but `sleep` (the edition decodes its own durations).
 *
 * @since 0.1.0
 * @category models
 */
export interface Steps<E, F, D> {
  /** Emits an event. */
  readonly emit: (event: E) => Step<E, F, D>
  /** Fails the event stream with a typed error (as the real channel would, e.g. `ConnectionLost`). */
  readonly fail: (error: F) => Step<E, F, D>
  /**
   * Waits until the application answers the latest `external_resource_requested`; with `echo`
   * (default) then emits `external_resource_granted` as the service does.
   */
  readonly awaitAnswer: (options?: { readonly echo?: boolean }) => Step<E, F, D>
  /** Ends the connection here (before `complete`, the façade reports `SessionEndedWithoutComplete`). */
  readonly end: Step<E, F, D>
}

/**
 * The {@link Steps} of an edition's events, errors and durations.
 *
 * @example
 * ```ts
 * import { Script } from "effect-agent-session-shell"
 *
 * const Step = Script.steps<string, Error, number>()
 * console.log(Step.awaitAnswer()) // { _tag: "AwaitAnswer", echo: true }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const steps = <E, F, D>(): Steps<E, F, D> => ({
  emit: (event) => ({ _tag: "Emit", event }),
  fail: (error) => ({ _tag: "Fail", error }),
  awaitAnswer: (options) => ({ _tag: "AwaitAnswer", echo: options?.echo ?? true }),
  end: { _tag: "End" }
})

/** The steps a connection plays: those before the first `End`. */
const played = <S extends { readonly _tag: string }>(steps: ReadonlyArray<S>): ReadonlyArray<S> => {
  const end = steps.findIndex((step) => step._tag === "End")
  return end === -1 ? steps : steps.slice(0, end)
}

/** The reason the real channel gives when the events fail with an error of this tag (`undefined`: interrupted). */
const failedReason = (errorTag: string | undefined): Connection.CloseReason => {
  switch (errorTag) {
    case undefined:
      return "closed-by-caller"
    case "ConnectionLost":
    case "NeverConnected":
      return "connection-lost"
    case "HandshakeRejected":
      return "handshake-rejected"
    case "Superseded":
      return "superseded"
    default:
      return "failed"
  }
}

/**
 * What `AwaitAnswer` does: nothing (no request was emitted yet), go on with the answer already
 * given to the latest request, or wait until {@link Play.answer} says it `wakes` the step.
 *
 * @since 0.1.0
 * @category models
 */
export type Await<A> =
  | { readonly _tag: "NoRequest" }
  | { readonly _tag: "Answered"; readonly answer: A }
  | { readonly _tag: "Waiting" }

/**
 * What an answer is, against the requests the connection emitted: accepted (and whether it wakes
 * the `AwaitAnswer` step waiting for it), or not pending.
 *
 * @since 0.1.0
 * @category models
 */
export type Answered =
  | { readonly _tag: "Accepted"; readonly wakes: boolean }
  | { readonly _tag: "NotPending"; readonly reason: "already-answered" | "never-received" }

/**
 * How the events of a connection ended: `undefined` when they ended by themselves, else the error
 * they failed with (`undefined` when they were interrupted).
 *
 * @since 0.1.0
 * @category models
 */
export type Exit = undefined | { readonly error: { readonly _tag: string } | undefined }

/**
 * One connection playing a script once: the shell runs {@link Play.steps} in order and reports
 * what happened (an event emitted or delivered, the script ran out, an answer given, the end);
 * the play says which requests are pending, what `AwaitAnswer` does, when the events end, and why.
 *
 * @example
 * ```ts
 * import { Script } from "effect-agent-session-shell"
 *
 * type Event = { readonly type: string; readonly key?: string }
 * const play = new Script.Play<Event, never, number, string>(
 *   [{ _tag: "Emit", event: { type: "request", key: "k" } }, { _tag: "AwaitAnswer", echo: true }],
 *   { kind: (event) => (event.type === "request" ? "request" : "event"), requestKey: (event) => event.key ?? "" }
 * )
 * play.emit({ type: "request", key: "k" })
 * console.log(play.awaitAnswer()._tag) // "Waiting"
 * console.log(play.answer("k", "yes")) // { _tag: "Accepted", wakes: true }
 * console.log(play.answer("k", "again")) // { _tag: "NotPending", reason: "already-answered" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Play<E, F, D, A> {
  /** The steps to run, in order (those before the first `End`). */
  readonly steps: ReadonlyArray<Step<E, F, D>>
  private readonly pending = new Set<string>()
  private readonly answered = new Set<string>()
  /** The latest request emitted, and its answer once given. */
  private latest: { readonly key: string; answer?: { readonly value: A } } | undefined
  private waiting = false
  /** How the script ended, when it ended by itself. */
  private ending: Connection.CloseReason | undefined

  constructor(
    steps: ReadonlyArray<Step<E, F, D>>,
    private readonly classifier: Pick<Connection.Classifier<E, unknown>, "kind" | "requestKey">,
    private readonly options: { readonly endOnError?: boolean | undefined } = {}
  ) {
    this.steps = played(steps)
  }

  /** An `Emit` step is run: a request emitted is pending (again) until answered. */
  emit(event: E): void {
    if (this.classifier.kind(event) !== "request") return
    const key = this.classifier.requestKey(event)
    this.pending.add(key)
    this.latest = { key }
  }

  /** An event is delivered: `true` when the events end after it (`complete`, or an error event with `endOnError`). */
  delivered(event: E): boolean {
    const kind = this.classifier.kind(event)
    if (kind === "complete") this.ending = "complete"
    else if (kind === "error" && this.options.endOnError === true) this.ending = "error-event"
    else return false
    return true
  }

  /** The script ran out before `complete`: the service closed the channel (as with 1000). */
  ranOut(): void {
    this.ending = "closed-by-service"
  }

  /** An `AwaitAnswer` step is run. */
  awaitAnswer(): Await<A> {
    const latest = this.latest
    if (latest === undefined) return { _tag: "NoRequest" }
    if (latest.answer !== undefined) return { _tag: "Answered", answer: latest.answer.value }
    this.waiting = true
    return { _tag: "Waiting" }
  }

  /** The application answers the request of this key. */
  answer(key: string, answer: A): Answered {
    if (!this.pending.has(key)) {
      return { _tag: "NotPending", reason: this.answered.has(key) ? "already-answered" : "never-received" }
    }
    this.pending.delete(key)
    this.answered.add(key)
    if (this.latest?.key !== key) return { _tag: "Accepted", wakes: false }
    this.latest.answer = { value: answer }
    const wakes = this.waiting
    this.waiting = false
    return { _tag: "Accepted", wakes }
  }

  /** The events ended: the reason the real channel gives. */
  closed(exit: Exit): Connection.CloseReason {
    return exit === undefined ? this.ending ?? "closed-by-caller" : failedReason(exit.error?._tag)
  }
}

/**
 * The types of a scripted world: its steps, requests, errors and recorded answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorldTypes {
  readonly step: unknown
  readonly onboard: { readonly name: string }
  readonly create: unknown
  readonly onboardError: unknown
  readonly createError: unknown
  readonly answer: unknown
}

/**
 * What an onboard or create-session call does in the scripted world: fail with the error set by
 * `failNext...`, or succeed with these values.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome<Err, A> = { readonly _tag: "Failed"; readonly error: Err } | { readonly _tag: "Succeeded"; readonly value: A }

/**
 * The scripted service: the script of the sessions created from now on, the agents onboarded and
 * the sessions created (with their ids), the failure of the next call on demand, the connections
 * opened and the answers given. It keeps no sessions to retrieve.
 *
 * @example
 * ```ts
 * import { Script } from "effect-agent-session-shell"
 *
 * const world = new Script.World<{
 *   step: string; onboard: { name: string }; create: object; onboardError: string; createError: string; answer: string
 * }>({ script: [] })
 * console.log(world.create({})) // { _tag: "Succeeded", value: { session_id: "test-session", ... } }
 * world.failNextCreate("busy")
 * console.log(world.create({})) // { _tag: "Failed", error: "busy" }
 * console.log(world.create({})._tag) // "Succeeded" (id "test-session-2")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class World<T extends WorldTypes> {
  /** The script of the sessions created from now on. */
  script: ReadonlyArray<T["step"]>
  /** Every answer the application gave, in order. */
  answers: ReadonlyArray<T["answer"]> = []
  /** Every create-session request the application made (validated). */
  sessionsCreated: ReadonlyArray<T["create"]> = []
  /** Every onboard request the application made (validated). */
  agentsOnboarded: ReadonlyArray<T["onboard"]> = []
  /** The connections opened, by session id. */
  connections: ReadonlyArray<string> = []
  private nextCreateError: { readonly error: T["createError"] } | undefined
  private nextOnboardError: { readonly error: T["onboardError"] } | undefined
  private sessions = 0

  constructor(private readonly options: { readonly script: ReadonlyArray<T["step"]>; readonly sessionId?: string | undefined }) {
    this.script = options.script
  }

  /** Replaces the script of the sessions created from now on. */
  setScript(script: ReadonlyArray<T["step"]>): void {
    this.script = script
  }

  /** Makes the next create-session call fail with this error. */
  failNextCreate(error: T["createError"]): void {
    this.nextCreateError = { error }
  }

  /** Makes the next onboard call fail with this error. */
  failNextOnboard(error: T["onboardError"]): void {
    this.nextOnboardError = { error }
  }

  /** An onboard call (validated): the agent's id and key, `test-agent-<name>`, `test-agent-key-<name>`. */
  onboard(request: T["onboard"]): Outcome<T["onboardError"], { readonly agentId: string; readonly apiKey: string }> {
    const failure = this.nextOnboardError
    this.nextOnboardError = undefined
    if (failure !== undefined) return { _tag: "Failed", error: failure.error }
    this.agentsOnboarded = [...this.agentsOnboarded, request]
    return { _tag: "Succeeded", value: { agentId: `test-agent-${request.name}`, apiKey: `test-agent-key-${request.name}` } }
  }

  /** Before a create-session call: the error it fails with, set by {@link World.failNextCreate}, taken. */
  beforeCreate(): { readonly error: T["createError"] } | undefined {
    const failure = this.nextCreateError
    this.nextCreateError = undefined
    return failure
  }

  /** A create-session request is recorded. */
  created(request: T["create"]): void {
    this.sessionsCreated = [...this.sessionsCreated, request]
  }

  /**
   * A create-session call (validated): the session as the service answers it (its wire fields,
   * for the edition to decode), started at the epoch, with the id given in the options, else
   * `test-session`, then `test-session-2`, ...
   */
  create(
    request: T["create"]
  ): Outcome<T["createError"], { readonly session_id: string; readonly status: "started"; readonly start_time: string }> {
    const failure = this.beforeCreate()
    if (failure !== undefined) return { _tag: "Failed", error: failure.error }
    this.created(request)
    this.sessions += 1
    const n = this.sessions
    const sessionId = this.options.sessionId ?? (n === 1 ? "test-session" : `test-session-${n}`)
    return { _tag: "Succeeded", value: { session_id: sessionId, status: "started", start_time: new Date(0).toISOString() } }
  }

  /**
   * A get-session call: the world keeps no sessions. The fields of the edition's `NotFound` (its
   * other fields, the status 404 among them, are the error's defaults).
   */
  getSession(sessionId: string): { readonly message: string; readonly operation: "AgentApi.getSession" } {
    return { message: `The test layer keeps no sessions to retrieve (${sessionId})`, operation: "AgentApi.getSession" }
  }

  /** A connection opened. */
  connected(sessionId: string): void {
    this.connections = [...this.connections, sessionId]
  }

  /** The application gave an answer. */
  answered(answer: T["answer"]): void {
    this.answers = [...this.answers, answer]
  }
}

/**
 * Options of {@link typical}.
 *
 * @since 0.1.0
 * @category models
 */
export interface TypicalOptions {
  /** The session's id (default `"test-session"`). */
  readonly sessionId?: string
  /** The address the agent starts at (default `https://example.com`). */
  readonly startUrl?: string
  /** How many actions it runs (default 3). */
  readonly actions?: number
  /** The request it makes halfway, and waits for the answer to (default none). */
  readonly ask?: "none" | "input" | "permission"
  /** The response of `complete` (default `"Done"`). */
  readonly response?: string
  /** The response's type (default `"STRING"`). */
  readonly type?: "STRING" | "JSON" | "MARKDOWN"
}

/**
 * An event of a {@link typical} session, shaped as the editions' events are (their tags and
 * field names) with plain values: ids as strings, an absent `field_name` as `undefined`, the
 * `total_cost` always given (and no `cost_summary`).
 *
 * @since 0.1.0
 * @category models
 */
export type TypicalEvent =
  | { readonly _tag: "Started"; readonly sessionId: string; readonly start_url: string }
  | { readonly _tag: "BrowserStarted"; readonly url: string; readonly action_session_id: string }
  | { readonly _tag: "ThoughtsAndMemories"; readonly thought: string; readonly memory: string }
  | {
    readonly _tag: "ActionRun"
    readonly name: string
    readonly action_session_id: string
    readonly content: string
  }
  | {
    readonly _tag: "ExternalResourceRequested"
    readonly resource_type: "request_user_input" | "admin_permission_request"
    readonly reason: string
    readonly action_session_id: string
    readonly field_name: string | undefined
  }
  | {
    readonly _tag: "Complete"
    readonly response: string
    readonly type: "STRING" | "JSON" | "MARKDOWN"
    readonly total_cost: number
    readonly session_id: string
  }

/**
 * A typical session's script (the test kit's default): started, browser, `actions` actions each
 * after its thoughts, optionally (after action `ceil(actions / 2)`) a request that waits for the
 * answer, and `complete` with a `total_cost` of one cent per action.
 *
 * @example
 * ```ts
 * import { Script } from "effect-agent-session-shell"
 *
 * const steps = Script.typical({ actions: 1, ask: "permission" })
 * console.log(steps.map((step) => (step._tag === "Emit" ? step.event._tag : step._tag)))
 * // ["Started", "BrowserStarted", "ThoughtsAndMemories", "ActionRun",
 * //  "ExternalResourceRequested", "AwaitAnswer", "Complete"]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const typical = (options: TypicalOptions = {}): ReadonlyArray<Step<TypicalEvent, never, never>> => {
  const sessionId = options.sessionId ?? "test-session"
  const actionSessionId = "test-action-session"
  const startUrl = options.startUrl ?? "https://example.com"
  const actions = options.actions ?? 3
  const emit = (event: TypicalEvent): Step<TypicalEvent, never, never> => ({ _tag: "Emit", event })
  const steps: Array<Step<TypicalEvent, never, never>> = [
    emit({ _tag: "Started", sessionId, start_url: startUrl }),
    emit({ _tag: "BrowserStarted", url: startUrl, action_session_id: actionSessionId })
  ]
  for (let i = 1; i <= actions; i++) {
    steps.push(emit({ _tag: "ThoughtsAndMemories", thought: `Step ${i}`, memory: `Did ${i - 1} steps` }))
    steps.push(emit({ _tag: "ActionRun", name: `action-${i}`, action_session_id: actionSessionId, content: `Doing step ${i}` }))
    if (i === Math.ceil(actions / 2) && options.ask !== undefined && options.ask !== "none") {
      const input = options.ask === "input"
      steps.push(emit({
        _tag: "ExternalResourceRequested",
        resource_type: input ? "request_user_input" : "admin_permission_request",
        reason: input ? "Need an email address" : "May I submit the form?",
        action_session_id: actionSessionId,
        field_name: input ? "email" : undefined
      }))
      steps.push({ _tag: "AwaitAnswer", echo: true })
    }
  }
  steps.push(emit({
    _tag: "Complete",
    response: options.response ?? "Done",
    type: options.type ?? "STRING",
    total_cost: Math.round(actions) / 100,
    session_id: sessionId
  }))
  return steps
}
