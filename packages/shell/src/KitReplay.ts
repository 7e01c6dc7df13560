/**
 * The test kit's in-memory replay, the part both editions share: a recording opened as the kit's
 * replay (its header checked), the application's create answered as recorded (after the failure
 * set on the kit, and noted by the kit), each connection and attempt of the application played on
 * the recording and reported to the kit, what an attempt waits on (a recorded delay, the engine's
 * flow, an answer) decided here, and every problem of the replay built as the edition's error.
 * The edition binds it: its schemas decode, its sleeps and latches wait, its engine plays.
 *
 * @since 0.1.0
 */
import { Recording } from "effect-agent-session-core"
import type { DriverStep, MemoryReplayOptions, ReplayDecoders, ReplayDriver, ReplayHooks } from "./internal/memory.js"
import { MemoryReplay } from "./internal/memory.js"

/**
 * How long a recorded answer waits for the application's by default (virtual time in tests): 30 s.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultAnswerTimeoutMillis = 30_000

/**
 * Options of the test kit's replay (`AgentSessionsTest.replay`), `D` the edition's duration input.
 *
 * @since 0.1.0
 * @category models
 */
export interface KitOptions<D> {
  /**
   * How long (virtual time) a recorded answer waits for the application's before the replay
   * fails with `ReplayMismatch`. Default 30 s.
   */
  readonly answerTimeout?: D | undefined
  /**
   * The `redact` the recording was made with: applied to the application's answers before
   * they are compared with the recorded ones.
   */
  readonly redact?: MemoryReplayOptions["redact"]
  /** The longest line read; a longer one is `InvalidRecording`. Default 16 Mi characters. */
  readonly maxLineLength?: number | undefined
}

/**
 * The fields of a recording that is not valid (an edition's `InvalidRecording`).
 *
 * @since 0.1.0
 * @category models
 */
export interface InvalidFields {
  /** The recording's file. */
  readonly path: string
  /** The line that is wrong (1-based); 0 when the file itself could not be read. */
  readonly line: number
  /** What is wrong with it. */
  readonly reason: string
}

/**
 * The fields of a replay the application did not follow (an edition's `ReplayMismatch`).
 *
 * @since 0.1.0
 * @category models
 */
export type MismatchFields = Omit<Extract<Recording.ReplayProblem, { readonly _tag: "Mismatch" }>, "_tag"> & {
  /** The recording's file. */
  readonly path: string
}

/**
 * How an edition builds its errors of a replay: a recording not valid (`I`), a mismatch (`M`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayErrors<I, M> {
  readonly invalid: (fields: InvalidFields) => I
  readonly mismatch: (fields: MismatchFields) => M
}

/**
 * A replay problem as the edition's error: not valid at a line of `path`, or a mismatch there.
 *
 * @example
 * ```ts
 * import { KitReplay } from "effect-agent-session-shell"
 *
 * const errors = { invalid: (fields: object) => ({ invalid: fields }), mismatch: (fields: object) => ({ mismatch: fields }) }
 * KitReplay.errorOf("rec.jsonl", { _tag: "Invalid", line: 3, reason: "bad" }, errors)
 * // { invalid: { path: "rec.jsonl", line: 3, reason: "bad" } }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const errorOf = <I, M>(path: string, problem: Recording.ReplayProblem, errors: ReplayErrors<I, M>): I | M => {
  if (problem._tag === "Invalid") return errors.invalid({ path, line: problem.line, reason: problem.reason })
  const { _tag, ...mismatch } = problem
  return errors.mismatch({ ...mismatch, path })
}

/**
 * What the kit is told as the application goes (its scripted world, `Script.World`, has these):
 * the failure set for the next create (taken), a create request, a connection opened, an answer
 * given (`R`: the request answered, `A`: the answer).
 *
 * @since 0.1.0
 * @category models
 */
export interface Observer<C, CE, R, A> {
  readonly beforeCreate: () => { readonly error: CE } | undefined
  readonly created: (request: C) => void
  readonly connected: (sessionId: string) => void
  readonly answered: (answer: { readonly sessionId: string; readonly request: R; readonly answer: A }) => void
}

/**
 * Options of {@link Replay.open}: the recording (its `path` names it in errors; its bytes come
 * from `source`), how it is read, the shell's decoders and errors, and the kit's observer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<S, E extends { readonly _tag: string }, CE extends E, F extends E, I, M, C, R, A>
  extends MemoryReplayOptions
{
  readonly path: string
  readonly decoders: ReplayDecoders<S, E, CE, F>
  readonly errors: ReplayErrors<I, M>
  readonly observer: Observer<C, CE, R, A>
}

/**
 * The answer to the application's create ({@link Replay.create}): the session (the header's, as
 * the shell decodes `{ session_id }`, when none was recorded or it does not decode), the error set
 * on the kit or recorded, or the replay's error (no create recorded here: a recording of `attach`).
 *
 * @since 0.1.0
 * @category models
 */
export type Created<S, CE, X> =
  | { readonly _tag: "Session"; readonly session: S }
  | { readonly _tag: "Failed"; readonly error: CE }
  | { readonly _tag: "Unrecorded"; readonly error: X }

/**
 * How a replayed attempt ends, as the edition's engine takes it (`F`: its event channel errors).
 *
 * @since 0.1.0
 * @category models
 */
export type Ending<F extends { readonly _tag: string }> =
  | Extract<DriverStep<F>, { readonly _tag: "End" }>["end"]
  | { readonly _tag: "Defect"; readonly defect: unknown }

/**
 * The engine's hooks an attempt plays into: the lines, and how the attempt ends (an edition's
 * transport hooks have these).
 *
 * @since 0.1.0
 * @category models
 */
export interface AttemptHooks<F extends { readonly _tag: string }> extends ReplayHooks {
  readonly end: (ending: Ending<F>) => void
}

/**
 * What a replayed attempt waits on, for the shell to act on:
 * - `Sleep`: wait `millis` (the recorded delay), then call `slept()`;
 * - `Wait`: wait until the shell's `wake` is called (the engine's flow resumed, or an answer
 *   given); with `timeout`, at most the answer timeout, then call `noAnswer`;
 * - `Done`: the attempt was ended through the hooks (as recorded, or with the replay's error as a
 *   defect): nothing more to do.
 *
 * @since 0.1.0
 * @category models
 */
export type AttemptStep =
  | { readonly _tag: "Sleep"; readonly millis: number }
  | { readonly _tag: "Wait"; readonly timeout: boolean }
  | { readonly _tag: "Done" }

/**
 * One replayed attempt of the engine: the recorded connection played into the hooks, the engine's
 * flow and the application's answers kept here, only the waits returned. A frame waits while the
 * engine has paused its reading; `wake` is called once when what a `Wait` waits for happens.
 *
 * @since 0.1.0
 * @category models
 */
export class Attempt<E extends { readonly _tag: string }, F extends E> {
  private paused = false
  /** What the last `Wait` waits for, until it happens. */
  private waiting: "flow" | "answer" | undefined = undefined
  /** A frame waits for the engine's flow. */
  private frameDue = false
  private done = false

  constructor(
    private readonly driver: ReplayDriver<E, F>,
    private readonly hooks: AttemptHooks<F>,
    private readonly failed: (problem: Recording.ReplayProblem) => unknown,
    private readonly written: "confirmed" | "written",
    private readonly wake: () => void
  ) {}

  /** What to wait on next (the lines before it played into the hooks). */
  next(): AttemptStep {
    if (this.done) return { _tag: "Done" }
    for (;;) {
      if (this.frameDue) {
        if (this.paused) return this.waitFor("flow", false)
        this.frameDue = false
        this.driver.deliver()
      }
      const step = this.driver.next()
      switch (step._tag) {
        case "Sleep":
          return step
        case "Frame":
          this.frameDue = true
          break
        case "AwaitAnswer":
          return this.waitFor("answer", step.timeout)
        case "End":
          return this.end(step.end)
        case "Fail":
          // The application did what the recording does not hold (or the recording is not valid
          // there): the attempt ends with the replay's error as a defect, as a stub dies.
          return this.end({ _tag: "Defect", defect: this.failed(step.problem) })
      }
    }
  }

  /** The delay of the last `Sleep` passed. */
  slept(): void {
    this.driver.slept()
  }

  /** No answer came within the answer timeout of the last `Wait` (`waited`: its description). */
  noAnswer(waited: string): void {
    this.waiting = undefined
    this.driver.noAnswer(waited)
  }

  /** The engine writes an answer: kept to compare with the recorded one; what became of it. */
  send(data: Recording.AnswerData): "confirmed" | "written" {
    this.driver.answered(data)
    this.woken("answer")
    return this.written
  }

  /**
   * The flow control the engine is handed with the attempt's writer (an edition's transport `Io`
   * has these): stop reading, read again, and an abort that has nothing to drop in memory.
   */
  readonly flow = {
    pause: (): void => this.pause(),
    resume: (): void => this.resume(),
    abort: (): void => {}
  }

  /** The engine stops reading (back-pressure): the next frame waits. */
  pause(): void {
    this.paused = true
  }

  /** The engine reads again. */
  resume(): void {
    this.paused = false
    this.woken("flow")
  }

  private waitFor(what: "flow" | "answer", timeout: boolean): AttemptStep {
    this.waiting = what
    return { _tag: "Wait", timeout }
  }

  private woken(what: "flow" | "answer"): void {
    if (this.waiting !== what) return
    this.waiting = undefined
    this.wake()
  }

  private end(ending: Ending<F>): AttemptStep {
    this.done = true
    this.hooks.end(ending)
    return { _tag: "Done" }
  }
}

/**
 * The test kit's replay of one recording ({@link Replay.open}): creates answered as recorded,
 * connections and their attempts played, everything the application does reported to the kit's
 * observer, every problem built as the edition's error (`I` not valid, `M` a mismatch). `S` is the edition's session, `E`
 * its errors (`CE` a create's, `F` the event channel's), `C` a create request, `R` a request
 * event and `A` an answer.
 *
 * @example
 * ```ts
 * import * as Fs from "node:fs"
 * import { FileSource, KitReplay } from "effect-agent-session-shell"
 * import { Recording } from "effect-agent-session-core"
 *
 * type Err = { readonly _tag: string }
 * const replay = KitReplay.Replay.open({
 *   path: "rec/session.jsonl",
 *   source: FileSource.fromFile("rec/session.jsonl", Fs),
 *   decoders: KitReplay.replayDecoders<object, Err, Err, Err>({ session: (s) => s, error: (e) => e }),
 *   errors: { invalid: (fields) => new Error(fields.reason), mismatch: (fields) => new Error(fields.difference) },
 *   observer: { beforeCreate: () => undefined, created: () => {}, connected: () => {}, answered: () => {} }
 * })
 * if (replay instanceof KitReplay.Replay) replay.close()
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Replay<S, E extends { readonly _tag: string }, CE extends E, F extends E, I, M, C, R, A> {
  private constructor(
    private readonly options: Options<S, E, CE, F, I, M, C, R, A>,
    private readonly replay: MemoryReplay,
    /** The header's session, for a create or a pass that recorded none. */
    private readonly headerSession: S
  ) {}

  /**
   * Opens a recording: its header read and checked (its session id must decode as the shell's
   * session), or the edition's error saying why it is not valid.
   */
  static open<S, E extends { readonly _tag: string }, CE extends E, F extends E, I, M, C, R, A>(
    options: Options<S, E, CE, F, I, M, C, R, A>
  ): Replay<S, E, CE, F, I, M, C, R, A> | I {
    const opened = MemoryReplay.open(options)
    if (!(opened instanceof MemoryReplay)) {
      return options.errors.invalid({ path: options.path, line: opened.line, reason: opened.reason })
    }
    const headerSession = options.decoders.session({ session_id: opened.header.sessionId })
    if (headerSession !== undefined) return new Replay(options, opened, headerSession)
    opened.close()
    return options.errors.invalid({ path: options.path, line: 1, reason: "header: sessionId is not a valid session id" })
  }

  /** The recording's header. */
  get header(): Recording.Header {
    return this.replay.header
  }

  /** The framing of the frames replayed. */
  get framing(): Recording.Header["dialect"]["framing"] {
    return this.replay.framing
  }

  /** The address the engine prints for a replayed connection: `replay:<path>`. */
  get printableUrl(): string {
    return `replay:${this.options.path}`
  }

  /**
   * What the edition's engine is told of a replayed connection: the recording's dialect, the
   * framing of its frames and the address it prints.
   */
  get channel(): {
    readonly dialect: Recording.Header["dialect"]
    readonly framing: Recording.Header["dialect"]["framing"]
    readonly printableUrl: string
  } {
    return { dialect: this.header.dialect, framing: this.framing, printableUrl: this.printableUrl }
  }

  /** A problem of the replay as the edition's error. */
  errorOf(problem: Recording.ReplayProblem): I | M {
    return errorOf(this.options.path, problem, this.options.errors)
  }

  /**
   * The application creates a session (`request`: as validated; `encoded`: as the recorder would
   * have written it; `secrets`: its keys, scrubbed before comparing): the failure set on the kit
   * first, else the request is noted and the recorded answer given.
   */
  create(request: C, encoded: unknown, secrets: ReadonlyArray<string>): Created<S, CE, I | M> {
    const failure = this.options.observer.beforeCreate()
    if (failure !== undefined) return { _tag: "Failed", error: failure.error }
    this.options.observer.created(request)
    const reply = this.replay.answerCreate(encoded, secrets, this.options.decoders)
    switch (reply._tag) {
      case "Unrecorded":
        return { _tag: "Unrecorded", error: this.errorOf(reply.problem) }
      case "Session":
        return { _tag: "Session", session: reply.session ?? this.headerSession }
      case "Failed":
        return reply
    }
  }

  /** The session the application created last, as recorded (else the header's). */
  session(): S {
    return this.replay.recordedSession(this.options.decoders) ?? this.headerSession
  }

  /** The application opens a connection to `sessionId`: noted, and the pass it plays on. */
  connection(sessionId: string): Recording.ReplayPass {
    this.options.observer.connected(sessionId)
    return this.replay.connection()
  }

  /**
   * An attempt of the engine on `pass`, playing into `hooks`; `wake` is called when what a `Wait`
   * waits for happens. `undefined` when no recorded connection plays (the hooks were told: the
   * attempt ended with the replay's error as a defect).
   */
  attempt(pass: Recording.ReplayPass, sessionId: string, hooks: AttemptHooks<F>, wake: () => void): Attempt<E, F> | undefined {
    const driver = this.replay.drive<E, F>(pass, sessionId, hooks, this.options.decoders)
    if (!Recording.isReplayProblem(driver)) {
      return new Attempt(driver, hooks, (problem) => this.errorOf(problem), this.replay.written, wake)
    }
    hooks.end({ _tag: "Defect", defect: this.errorOf(driver) })
    return undefined
  }

  /** The application's answer to `request` went through: noted. */
  answered(sessionId: string, request: R, answer: A): void {
    this.options.observer.answered({ sessionId, request, answer })
  }

  /** Closes the recording's readers. */
  close(): void {
    this.replay.close()
  }
}

export type {
  /**
   * What a replayed attempt does next: sleep, hand the engine a line, wait for an answer, end as
   * recorded, or fail the replay.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayStep,
  /**
   * Options of an in-memory replay (the file, how it is read, the answers' `redact`).
   *
   * @since 0.1.0
   * @category models
   */
  MemoryReplayOptions,
  /**
   * How a shell decodes a recorded session and errors into its own values, and which errors a
   * create and the event channel can fail with.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayDecoders,
  /**
   * The recorded answer to a create, decoded: a session (or the shell's own), an error, or no
   * create recorded.
   *
   * @since 0.1.0
   * @category models
   */
  CreateReply,
  /**
   * What a driven attempt hands the shell's engine without waiting (an edition's transport hooks
   * have this shape).
   *
   * @since 0.1.0
   * @category models
   */
  ReplayHooks,
  /**
   * What a driven attempt waits on: a sleep, the engine's flow for a frame, an answer, its
   * decoded end, or a failure of the replay.
   *
   * @since 0.1.0
   * @category models
   */
  DriverStep
} from "./internal/memory.js"

export {
  /**
   * The in-memory replay of one recording as a step iterator: creates answered, connections and
   * attempts played, for an edition's shell to bind to its engine.
   *
   * @since 0.1.0
   * @category models
   */
  MemoryReplay,
  /**
   * A shell's replay decoders from its session and error decoders, the errors sorted by the
   * recorded tags a create and the event channel can fail with.
   *
   * @since 0.1.0
   * @category constructors
   */
  replayDecoders,
  /**
   * One replayed attempt of an engine, polled step by step.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayAttempt,
  /**
   * One replayed attempt driven for a shell with an engine: lines handed to its hooks, ends
   * decoded, only the waits returned.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayDriver
} from "./internal/memory.js"
