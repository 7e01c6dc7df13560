/**
 * The test kit's scripted connection, the part both editions share: the script of the kit's world
 * played once (`Script.Play`, with the events told apart as the protocol tells them),
 * the connection reported to the world when it starts, and each answer of the application matched
 * against the requests emitted: reported to the world when accepted, else the fields of the
 * edition's `RequestNotPending`. The edition binds it to its streams, deferreds and clock.
 *
 * @since 0.1.0
 */
import { Events } from "effect-agent-session-core"
import { type Answered, Play, type Step } from "./Script.js"
import { classifier, type Event, keyOf, type Request } from "./ConnectionShell.js"

/**
 * An answer the application gave (`A`), with the request it answered (`R`) and the session.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedAnswer<R, A> {
  readonly sessionId: string
  readonly request: R
  readonly answer: A
}

/**
 * Options of the test kit's scripted layer (`S`: a step of the edition's scripts).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<S> {
  /** The script every session follows (default `AgentSessionsTest.session()`). */
  readonly script?: ReadonlyArray<S> | undefined
  /** The session id given to created sessions (default `"test-session"`, then `"test-session-2"`, ...). */
  readonly sessionId?: string | undefined
}

/**
 * What a scripted connection needs of the kit's world (its `Script.World` has these): the script
 * of the sessions created from now on, and where connections and answers are reported.
 *
 * @since 0.1.0
 * @category models
 */
export interface World<E, F, D, R, A> {
  readonly script: ReadonlyArray<Step<E, F, D>>
  readonly connected: (sessionId: string) => void
  readonly answered: (answer: RecordedAnswer<R, A>) => void
}

/**
 * What became of an answer: accepted (and whether it wakes the `AwaitAnswer` step waiting for
 * it), or not pending, with the fields of the edition's `RequestNotPending`.
 *
 * @since 0.1.0
 * @category models
 */
export type Responded =
  | Extract<Answered, { readonly _tag: "Accepted" }>
  | {
    readonly _tag: "NotPending"
    readonly error: {
      readonly resourceType: string
      readonly actionSessionId: string
      readonly reason: Extract<Answered, { readonly _tag: "NotPending" }>["reason"]
    }
  }

/**
 * What a scripted connection does next ({@link Connection.next}), for the shell to act on:
 * - `Emit`: emit the event (a scripted one, or the echo of an answer);
 * - `Fail`: fail the events with the error;
 * - `Sleep`: wait `duration` on the clock, then ask again;
 * - `Wait`: wait until {@link Connection.respond} says an answer `wakes` it, then ask again;
 * - `Done`: the script ran out: the events end (the service closed the channel).
 *
 * @since 0.1.0
 * @category models
 */
export type Next<E, F, D> =
  | { readonly _tag: "Emit"; readonly event: E }
  | { readonly _tag: "Fail"; readonly error: F }
  | { readonly _tag: "Sleep"; readonly duration: D }
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Done" }

/**
 * One connection of the test kit playing its world's script once to `sessionId`. The shell asks
 * {@link Connection.next} what to do until it says `Done` (or the events end), calls
 * {@link Connection.opened} when its events start and {@link Connection.respond} for each answer;
 * its option `echo` makes the event an `AwaitAnswer` step with `echo` emits for an answer.
 *
 * @example
 * ```ts
 * import { KitScript } from "effect-agent-session-shell"
 *
 * const request = { _tag: "ExternalResourceRequested", action_session_id: "a1", resource_type: "request_user_input" } as const
 * const answers: Array<unknown> = []
 * const world = { script: [{ _tag: "Emit", event: request }] as const, connected: () => {}, answered: (a: unknown) => answers.push(a) }
 * const connection = new KitScript.Connection(world, "s1")
 * connection.play.emit(request)
 * connection.respond(request, "yes") // { _tag: "Accepted", wakes: false }
 * connection.respond(request, "again") // { _tag: "NotPending", error: { ..., reason: "already-answered" } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Connection<E extends Event, F, D, R extends Request, A> {
  /** The script played once (its steps before the first `End`). */
  readonly play: Play<E, F, D, A>
  /** The next step of the script to run. */
  private index = 0
  /** The `AwaitAnswer` step waiting for its answer. */
  private awaiting: Extract<Step<E, F, D>, { readonly _tag: "AwaitAnswer" }> | undefined

  constructor(
    private readonly world: World<E, F, D, R, A>,
    private readonly sessionId: string,
    private readonly options: {
      readonly endOnError?: boolean | undefined
      /** The event an `AwaitAnswer` step with `echo` emits for the answer (none: it emits nothing). */
      readonly echo?: ((answer: A) => E) | undefined
    } = {}
  ) {
    this.play = new Play<E, F, D, A>(world.script, classifier, options)
  }

  /**
   * What to do next: the steps run in order (a request emitted is pending until answered), an
   * `AwaitAnswer` waits for the answer to the latest request (none emitted: it goes on) and then,
   * with `echo`, emits the option `echo` of it; after the last step, `Done` (the script ran out).
   */
  next(): Next<E, F, D> {
    for (;;) {
      const step = this.awaiting ?? this.play.steps[this.index]
      if (step === undefined) {
        this.play.ranOut()
        return { _tag: "Done" }
      }
      if (this.awaiting === undefined) this.index += 1
      this.awaiting = undefined
      switch (step._tag) {
        case "Emit":
          this.play.emit(step.event)
          return step
        case "Fail":
        case "Sleep":
          return step
        case "AwaitAnswer": {
          const awaited = this.play.awaitAnswer()
          if (awaited._tag === "Waiting") {
            this.awaiting = step
            return { _tag: "Wait" }
          }
          const echo = this.options.echo
          if (awaited._tag === "Answered" && step.echo && echo !== undefined) return { _tag: "Emit", event: echo(awaited.answer) }
          break
        }
        case "End":
          break
      }
    }
  }

  /** The connection's events start: reported to the world. */
  opened(): void {
    this.world.connected(this.sessionId)
  }

  /** The application answers `request`: reported to the world when accepted. */
  respond(request: R, answer: A): Responded {
    const answered = this.play.answer(keyOf(request), answer)
    if (answered._tag === "NotPending") {
      return {
        _tag: "NotPending",
        error: {
          resourceType: Events.rawOf(request.resource_type),
          actionSessionId: request.action_session_id,
          reason: answered.reason
        }
      }
    }
    this.world.answered({ sessionId: this.sessionId, request, answer })
    return answered
  }
}
