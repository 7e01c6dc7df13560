/**
 * The plain part of the `AgentSessions` façade: the state of a session's event guard (the
 * watched session, the failure its events ended with, whether its events were consumed, and the
 * outcome settled from them), the options of the call that creates a session, and the façade's
 * texts. An edition acts on the decisions read here with its own stream stages, deferred values
 * and errors: it gives a {@link Guard} its error and outcome constructors ({@link Build}) and
 * turns a {@link Settled} into its own success or failure.
 *
 * @example
 * ```ts
 * import { Facade } from "effect-agent-session-shell"
 *
 * type Event = { readonly name: string }
 * const guard = new Facade.Guard<Event, Event, Event, string, string>({ maxActions: 1 }, {
 *   wireName: (event) => event.name,
 *   actionSessionId: () => "",
 *   resourceType: () => "request_user_input",
 *   errorText: () => "",
 *   cost: () => undefined
 * }, {
 *   outcome: (completed) => `completed after ${completed.actions} actions`,
 *   overrun: (actions) => `${actions} actions`,
 *   withoutComplete: () => "ended without complete"
 * })
 * guard.watched.received([{ name: "action_run" }, { name: "complete" }])
 * console.log(guard.ended(), guard.settle(false)) // undefined { _tag: "Success", value: "completed after 1 actions" }
 * ```
 *
 * @since 0.1.0
 */
import { Session } from "effect-agent-session-core"

/**
 * What a {@link Guard} builds with the edition's own values: the outcome of a session that
 * completed, the failure of the budget's overrun (at a count of actions), and the failure of events
 * that ended before `complete` (with the last error event's text).
 *
 * @since 0.1.0
 * @category models
 */
export interface Build<E, C, O, F> {
  readonly outcome: (completed: Session.Completed<C, E>) => O
  readonly overrun: (actions: number) => F
  readonly withoutComplete: (lastError: string | undefined) => F
}

/**
 * A session's outcome once its events are over: the outcome, or the failure it is awaited with.
 *
 * @since 0.1.0
 * @category models
 */
export type Settled<O, F> =
  | { readonly _tag: "Success"; readonly value: O }
  | { readonly _tag: "Failure"; readonly error: F }

/**
 * The defect of a session's events consumed a second time (`RunningSession.events`,
 * `forEachBatch` and `outcome` consume them once between them).
 *
 * @since 0.1.0
 * @category models
 */
export const consumedTwice = "A RunningSession's events can be consumed once (by `events` or by `forEachBatch`)"

/**
 * The warning logged when `run` meets a request and was given no `onRequest` handler: the request
 * is denied.
 *
 * @since 0.1.0
 * @category models
 */
export const noRequestHandler = "No onRequest handler: denying the agent's request"

/**
 * The options `start` passes to the call that creates the session: the agent, and the
 * idempotency key only when one is given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createOptions = <A>(
  options: { readonly agent?: A | undefined; readonly idempotencyKey?: string | undefined }
): { readonly agent: A | undefined; readonly idempotencyKey?: string } =>
  options.idempotencyKey === undefined
    ? { agent: options.agent }
    : { agent: options.agent, idempotencyKey: options.idempotencyKey }

/**
 * The state of one session's event guard, over its {@link Session.Watched} (read each chunk with
 * `watched.received`): `E` an event, `Q` a request, `C` the `complete` event, `O` the outcome, `F`
 * the failure the events and the outcome fail with. It records the failure the events ended with
 * (the connection's, the budget's overrun, or their end before `complete`): it is the failure the
 * outcome is awaited with. Nothing here is called per event.
 *
 * @since 0.1.0
 * @category models
 */
export class Guard<E, Q extends E, C extends E, O, F> {
  /** The watched session: the budget, the requests pending, the outcome. */
  readonly watched: Session.Watched<E, Q, C>
  /** The failure the events ended with, once they did: what the outcome fails with. */
  failedWith: F | undefined = undefined
  private consumed = false

  constructor(
    options: Session.Options,
    classifier: Session.Classifier<E, Q, C>,
    private readonly build: Build<E, C, O, F>
  ) {
    this.watched = new Session.Watched(options, classifier)
  }

  /**
   * Whether the events may be consumed now: true the first time only (by the events or by the
   * outcome, which drains them when they were not consumed).
   */
  consume(): boolean {
    if (this.consumed) return false
    this.consumed = true
    return true
  }

  /** The outcome of the `complete` received, once one was (`Received.completed`). */
  completed(): O | undefined {
    const completed = this.watched.completed
    return completed === undefined ? undefined : this.build.outcome(completed)
  }

  /** The connection's events failed: with `error`, or with no failure of their own (`undefined`). */
  failed(error: F | undefined): void {
    this.failedWith = error
  }

  /**
   * The budget stopped the session at `actions` (`watched.stoppedAt`): the failure the events end
   * with (the connection is closed first, the session may go on at the service).
   */
  overran(actions: number): F {
    return this.failedWith = this.build.overrun(actions)
  }

  /**
   * The connection's events ended without a failure of their own: `undefined` when `complete` was
   * received, else the failure the events end with (the budget's overrun, or their end before
   * `complete`).
   */
  ended(): F | undefined {
    const ended = this.watched.ended()
    if (ended._tag === "Completed") return undefined
    return this.failedWith = ended._tag === "Overrun"
      ? this.build.overrun(ended.actions)
      : this.build.withoutComplete(ended.lastError)
  }

  /**
   * The outcome once the events are closed, given whether they ended with a failure (a defect
   * aside: it stays the edition's). A failure of the events' own is the outcome's; any other (the
   * consumer's own failure or interruption) is not passed on: then, as after a success, the
   * outcome is the `complete` received, else the events ended without it.
   */
  settle(failed: boolean): Settled<O, F> {
    if (failed && this.failedWith !== undefined) return { _tag: "Failure", error: this.failedWith }
    const settled = this.watched.settled()
    return settled._tag === "Completed"
      ? { _tag: "Success", value: this.build.outcome(settled) }
      : { _tag: "Failure", error: this.build.withoutComplete(settled.lastError) }
  }
}
