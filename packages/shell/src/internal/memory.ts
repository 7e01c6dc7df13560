/**
 * The in-memory replay of a recording as a step iterator (`MemoryReplay`,
 * `ReplayAttempt`), written once for both editions. The shell asks what is next
 * (`poll()`) and gets a plain value (sleep, open, deliver a frame, wait for an answer, end the
 * attempt, fail the replay); it tells the iterator what happened (`slept()`, `answered(data)`,
 * `noAnswer(waited)`, `notDecoded()`) and maps the values to its streams, sleeps and errors.
 * `ReplayDriver` is the same iterator one level up, for a shell with an engine: it hands
 * the engine what needs no waiting through the shell's hooks, decodes the recorded errors and
 * sessions with the shell's {@link ReplayDecoders}, and returns only what the shell waits on.
 * Re-exported by `KitReplay`.
 */
import { Recording, type Connection, type Dialect } from "effect-agent-session-core"

/**
 * What a replayed attempt does next, for the shell to act on:
 * - `Sleep`: wait `millis` (the recorded delay before the next line), then call `slept()`;
 * - `Open`, `Text`, `Binary`, `NamedEvent`, `TooLarge`, `Alive`: hand it to the engine (a frame
 *   only while the engine's flow is not paused);
 * - `AwaitAnswer`: wait until the application answers (`answered`), at most the answer timeout
 *   when `timeout` (then call `noAnswer`), else for as long as it takes;
 * - `End`: end the attempt as recorded (the shell decodes the error of `Fatal` and
 *   `RetryConnectTimeout`; one it cannot decode is reported with `notDecoded()`);
 * - `Fail`: the replay cannot go on (the shell ends the attempt with its error as a defect).
 * `End` and `Fail` are the last steps.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayStep =
  | { readonly _tag: "Sleep"; readonly millis: number }
  | { readonly _tag: "Open" }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Binary"; readonly bytes: Uint8Array }
  | { readonly _tag: "NamedEvent"; readonly event: string; readonly data: string }
  | { readonly _tag: "TooLarge"; readonly size: number }
  | { readonly _tag: "Alive" }
  | { readonly _tag: "AwaitAnswer"; readonly timeout: boolean }
  | { readonly _tag: "End"; readonly end: Exclude<Recording.RecordedEnd, { readonly _tag: "AwaitClose" }> }
  | { readonly _tag: "Fail"; readonly problem: Recording.ReplayProblem }

/**
 * Options of an in-memory replay.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryReplayOptions {
  /** The recording's bytes (the shell reads a file: `FileSource.fromFile`). */
  readonly source: Recording.Source
  /** The longest line read. Default {@link defaultMaxLineLength}. */
  readonly maxLineLength?: number | undefined
  /** Applied to the application's answers before they are compared (the recording's `redact`). */
  readonly redact?: ((entry: Recording.Entry) => Recording.Entry) | undefined
}

/**
 * One replayed attempt of the application's engine: the next recorded connection of its pass,
 * line by line. Made by {@link MemoryReplay.attempt}.
 *
 * @since 0.1.0
 * @category models
 */
export class ReplayAttempt {
  private readonly given = new Recording.GivenAnswers()
  /** The line being played, not yet done with. */
  private current: Recording.Numbered | undefined = undefined
  /** The recorded time reached. */
  private at: number
  /** Whether the delay before `current` was slept. */
  private sleptFor = false
  /** Whether `current` was checked for answers the recording never holds. */
  private checked = false
  /** The answer wait of `current` timed out (its description), or `undefined`. */
  private timedOut: string | undefined = undefined
  /** The end the shell could not decode. */
  private rejected = false
  private last: ReplayStep | undefined = undefined

  /** The recorded connection number played. */
  readonly conn: number

  constructor(
    private readonly pass: Recording.ReplayPass,
    connect: Recording.Numbered,
    private readonly redact: ((entry: Recording.Entry) => Recording.Entry) | undefined
  ) {
    this.at = connect.entry.t
    this.conn = connect.entry.type === "connect" ? connect.entry.conn : 0
  }

  /** The application answered (an answer written on the replayed connection). */
  answered(data: Recording.AnswerData): void {
    this.given.give(data)
  }

  /** The delay of the last `Sleep` passed. */
  slept(): void {
    this.sleptFor = true
  }

  /** No answer came within the timeout of the last `AwaitAnswer` (`waited`: its description). */
  noAnswer(waited: string): void {
    this.timedOut = waited
  }

  /** The shell could not decode the recorded error of the last `End`: the next step fails. */
  notDecoded(): void {
    this.rejected = true
  }

  /** What to do next. */
  poll(): ReplayStep {
    if (this.last !== undefined) {
      if (!this.rejected || this.last._tag !== "End") return this.last
      return this.finish(this.rejectedEnd(this.last.end))
    }
    if (this.current === undefined) {
      const next = this.pass.nextInConnection(this.conn)
      if (Recording.isReplayProblem(next)) return this.finish({ _tag: "Fail", problem: next })
      this.current = next
      this.sleptFor = false
      this.checked = false
    }
    const { entry, line } = this.current
    if (!this.checked) {
      if (!this.sleptFor && entry.t > this.at) return { _tag: "Sleep", millis: entry.t - this.at }
      this.at = Math.max(this.at, entry.t)
      this.checked = true
      // An answer given by now (the delay slept) that the recording never holds.
      const unrecorded = this.pass.unrecorded(entry, line, this.conn, this.given)
      if (unrecorded !== undefined) return this.finish({ _tag: "Fail", problem: unrecorded })
    }
    switch (entry.type) {
      case "open":
        return this.done({ _tag: "Open" })
      case "frame":
        if ("text" in entry) return this.done({ _tag: "Text", text: entry.text })
        if ("base64" in entry) return this.done({ _tag: "Binary", bytes: Recording.decodeBase64(entry.base64) ?? new Uint8Array() })
        return this.done({ _tag: "NamedEvent", event: entry.event, data: entry.data })
      case "too-large":
        return this.done({ _tag: "TooLarge", size: entry.size })
      case "alive":
        return this.done({ _tag: "Alive" })
      case "answer": {
        const answer = this.given.take()
        if (answer === undefined && this.timedOut === undefined) return { _tag: "AwaitAnswer", timeout: true }
        const waited = this.timedOut ?? ""
        this.timedOut = undefined
        const problem = Recording.checkAnswer(entry, line, answer === undefined ? undefined : this.redacted(answer, entry), waited)
        if (problem !== undefined) return this.finish({ _tag: "Fail", problem })
        // A write that failed when it was recorded fails the connection again here.
        if (typeof entry.result === "object" && entry.result.retry) {
          return this.finish({ _tag: "End", end: { _tag: "Retry", cause: `answer not written: ${entry.result.failed}` } })
        }
        this.current = undefined
        return this.poll()
      }
      case "close": {
        const recorded = Recording.recordedEnd(entry, line)
        if (Recording.isReplayProblem(recorded)) return this.finish({ _tag: "Fail", problem: recorded })
        if (recorded._tag === "AwaitClose") {
          // The application closes it: an answer it gives until then was never recorded.
          const late = this.given.take()
          if (late === undefined) return { _tag: "AwaitAnswer", timeout: false }
          return this.finish({ _tag: "Fail", problem: Recording.unrecordedAnswer(line, this.conn, late) })
        }
        return this.finish({ _tag: "End", end: recorded })
      }
      default:
        return this.finish({
          _tag: "Fail",
          problem: { _tag: "Invalid", line, reason: `a ${entry.type} line before connection ${this.conn} closed` }
        })
    }
  }

  /** A step that plays the current line: the next poll reads on. */
  private done(step: ReplayStep): ReplayStep {
    this.current = undefined
    return step
  }

  /** A last step. */
  private finish(step: ReplayStep): ReplayStep {
    this.last = step
    return step
  }

  private rejectedEnd(end: Recording.RecordedEnd): ReplayStep {
    const line = this.current?.line ?? 0
    const reason = end._tag === "RetryConnectTimeout"
      ? "close: the error is not one an attempt is retried for"
      : "close: the error is not one of the event channel's"
    return { _tag: "Fail", problem: { _tag: "Invalid", line, reason } }
  }

  /** The application's answer as the recording would keep it (its `redact` applied). */
  private redacted(data: Recording.AnswerData, recorded: Extract<Recording.Entry, { readonly type: "answer" }>): Recording.AnswerData {
    if (this.redact === undefined) return data
    const redacted = this.redact({ ...recorded, data })
    return redacted.type === "answer" ? redacted.data : data
  }
}

/**
 * The in-memory replay of one recording: passes over the file, one per session replayed. The
 * application's create is answered by the create lines ({@link create}); each connection of the
 * application plays on the pass of the session created last, else on a fresh pass from the first
 * connection ({@link connection}); each attempt of its engine plays the pass's next recorded
 * connection ({@link attempt}). Readers stay open until {@link close}.
 *
 * @since 0.1.0
 * @category models
 */
export class MemoryReplay {
  private readonly readers = new Set<Recording.Reader>()
  private current: Recording.ReplayPass | undefined = undefined
  /** The session each pass created (for `getSession`). */
  private readonly sessions = new WeakMap<Recording.ReplayPass, Recording.JsonObject>()

  private constructor(readonly options: MemoryReplayOptions, readonly header: Recording.Header) {}

  /** The framing of the frames replayed (a Server-Sent Event's data holds the event and its data). */
  get framing(): Dialect.Framing {
    return this.header.transport === "sse" ? "event-data" : this.header.dialect.framing
  }

  /** What became of an answer the application writes: confirmed over SSE (a POST), else written. */
  get written(): "confirmed" | "written" {
    return this.header.transport === "sse" ? "confirmed" : "written"
  }

  /** Opens a recording: its header read and checked, or why it is not valid. */
  static open(options: MemoryReplayOptions): MemoryReplay | Recording.Invalid {
    const opened = Recording.Reader.open(options.source, options.maxLineLength ?? Recording.defaultMaxLineLength)
    if (!("reader" in opened)) return opened
    opened.reader.close()
    return new MemoryReplay(options, opened.header)
  }

  private newPass(): Recording.ReplayPass {
    const opened = Recording.Reader.open(this.options.source, this.options.maxLineLength ?? Recording.defaultMaxLineLength)
    if (!("reader" in opened)) return new Recording.ReplayPass(undefined, { _tag: "Invalid", line: opened.line, reason: opened.reason })
    this.readers.add(opened.reader)
    return new Recording.ReplayPass(opened.reader)
  }

  /**
   * The recorded answer to the application's create (`actual`: its request encoded; `secrets`:
   * the keys it holds): see `ReplayPass.create`. A session or error the shell cannot decode is
   * reported with {@link notDecoded}.
   */
  create(actual: unknown, secrets: ReadonlyArray<string> = []): Recording.CreateAnswer {
    const pass = this.current !== undefined && this.current.phase === "create" ? this.current : this.newPass()
    this.current = pass
    const answer = pass.create(actual, secrets)
    if (answer._tag === "Created") this.sessions.set(pass, answer.session)
    return answer
  }

  /** The shell could not decode the session or error `answer` holds: the next connection fails. */
  notDecoded(answer: Extract<Recording.CreateAnswer, { readonly _tag: "Created" | "CreateFailed" }>): void {
    const pass = this.current
    if (pass === undefined) return
    if (answer._tag === "Created") {
      this.sessions.delete(pass)
      pass.fail({ _tag: "Invalid", line: answer.line, reason: "created: the session is not valid" })
    } else {
      pass.fail({ _tag: "Invalid", line: answer.line, reason: "create-failed: the error is not one a create can fail with" })
      pass.phase = "events"
    }
  }

  /** The session the current pass created, as recorded (`undefined`: the header's session). */
  session(): Recording.JsonObject | undefined {
    return this.current === undefined ? undefined : this.sessions.get(this.current)
  }

  /** The pass a connection of the application plays: the session created last, else a fresh one. */
  connection(): Recording.ReplayPass {
    if (this.current !== undefined && this.current.phase === "events") return this.current
    const pass = this.newPass()
    pass.phase = "events"
    this.current = pass
    return pass
  }

  /** An attempt of the engine on `pass` (to `sessionId`): the next recorded connection, or why none plays. */
  attempt(pass: Recording.ReplayPass, sessionId: string): ReplayAttempt | Recording.ReplayProblem {
    const connect = pass.nextConnection(sessionId, this.header.sessionId)
    return Recording.isReplayProblem(connect) ? connect : new ReplayAttempt(pass, connect, this.options.redact)
  }

  /**
   * The recorded answer to the application's create, decoded with the shell's `decoders`: see
   * {@link create}. A session or error that does not decode (or an error a create cannot fail
   * with) is reported with {@link notDecoded} and answered by the shell's own session
   * (`session: undefined`), as one that was not recorded is.
   */
  answerCreate<S, E extends { readonly _tag: string }, CE extends E, F extends E>(
    actual: unknown,
    secrets: ReadonlyArray<string>,
    decoders: ReplayDecoders<S, E, CE, F>
  ): CreateReply<S, CE> {
    const answer = this.create(actual, secrets)
    switch (answer._tag) {
      case "NotRecorded":
        return { _tag: "Session", session: undefined }
      case "Unrecorded":
        return answer
      case "Created": {
        const session = decoders.session(answer.session)
        if (session === undefined) this.notDecoded(answer)
        return { _tag: "Session", session }
      }
      case "CreateFailed": {
        const error = decoders.error(answer.error)
        // The application may create again: the next create line answers it.
        if (error !== undefined && decoders.isCreateError(error)) return { _tag: "Failed", error }
        this.notDecoded(answer)
        return { _tag: "Session", session: undefined }
      }
    }
  }

  /** The session the current pass created, decoded (`undefined`: none, or it does not decode). */
  recordedSession<S>(decoders: Pick<ReplayDecoders<S, never, never, never>, "session">): S | undefined {
    const recorded = this.session()
    return recorded === undefined ? undefined : decoders.session(recorded)
  }

  /**
   * An attempt of the engine on `pass` (to `sessionId`) driven for a shell with an engine: its
   * `hooks` are handed the lines that need no waiting, its `decoders` decode the recorded ends.
   */
  drive<E extends { readonly _tag: string }, F extends E>(
    pass: Recording.ReplayPass,
    sessionId: string,
    hooks: ReplayHooks,
    decoders: Pick<ReplayDecoders<unknown, E, E, F>, "error" | "isChannelError">
  ): ReplayDriver<E, F> | Recording.ReplayProblem {
    const attempt = this.attempt(pass, sessionId)
    return Recording.isReplayProblem(attempt) ? attempt : new ReplayDriver<E, F>(attempt, hooks, decoders)
  }

  /** Closes every reader opened. */
  close(): void {
    for (const reader of this.readers) reader.close()
    this.readers.clear()
  }
}

/**
 * How a shell decodes what a recording holds into its own values: a created session (`S`), an
 * error (`E`, its whole error union), and which errors a create (`CE`) and the event channel
 * (`F`) can fail with. `undefined`: the value does not decode.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayDecoders<S, E extends { readonly _tag: string }, CE extends E, F extends E> {
  readonly session: (session: Recording.JsonObject) => S | undefined
  readonly error: (error: Recording.EncodedError) => E | undefined
  readonly isCreateError: (error: E) => error is CE
  readonly isChannelError: (error: E) => error is F
}

/**
 * A shell's {@link ReplayDecoders} from its decoders of a session and of an error: the errors a
 * create can fail with are those of a tag in `createErrorTags`, the event channel's those of a tag
 * in `eventChannelErrorTags` (`CE` and `F` are the shell's unions of those errors).
 *
 * @since 0.1.0
 * @category constructors
 */
export const replayDecoders = <S, E extends { readonly _tag: string }, CE extends E, F extends E>(
  decode: Pick<ReplayDecoders<S, E, CE, F>, "session" | "error">
): ReplayDecoders<S, E, CE, F> => ({
  session: decode.session,
  error: decode.error,
  isCreateError: (error): error is CE => Recording.createErrorTags.has(error._tag),
  isChannelError: (error): error is F => Recording.eventChannelErrorTags.has(error._tag)
})

/**
 * The recorded answer to a create, decoded ({@link MemoryReplay.answerCreate}): the session to
 * answer with (`undefined`: the shell's own, as none was recorded or it does not decode), the
 * recorded error, or no create recorded here (the replay cannot go on: `problem`).
 *
 * @since 0.1.0
 * @category models
 */
export type CreateReply<S, CE> =
  | { readonly _tag: "Session"; readonly session: S | undefined }
  | { readonly _tag: "Failed"; readonly error: CE }
  | { readonly _tag: "Unrecorded"; readonly problem: Recording.ReplayProblem }

/**
 * What a driven attempt hands the shell's engine as it plays, without waiting: the connection
 * opened, a frame of the dialect's framing, a Server-Sent Event, an event too large, bytes that
 * carry no event. An edition's transport hooks have this shape.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayHooks {
  readonly open: () => void
  readonly frame: (data: string | Uint8Array) => void
  readonly namedEvent: (name: string, data: string) => void
  readonly tooLarge: (size: number) => void
  readonly alive: () => void
}

/**
 * What a driven attempt waits on, for the shell to act on:
 * - `Sleep`: wait `millis`, then call `slept()`;
 * - `Frame`: wait until the engine's flow is not paused, then call `deliver()`;
 * - `AwaitAnswer`: as {@link ReplayStep}'s (`answered`, `noAnswer`);
 * - `End`: end the attempt with this ending (its error decoded; a `Defect` carries the defect to
 *   end it with);
 * - `Fail`: the replay cannot go on (the shell ends the attempt with its error as a defect).
 * `End` and `Fail` are the last steps.
 *
 * @since 0.1.0
 * @category models
 */
export type DriverStep<F extends { readonly _tag: string }> =
  | { readonly _tag: "Sleep"; readonly millis: number }
  | { readonly _tag: "Frame" }
  | { readonly _tag: "AwaitAnswer"; readonly timeout: boolean }
  | { readonly _tag: "End"; readonly end: Connection.Ending<F, Extract<F, { readonly _tag: "ConnectTimeout" }>> }
  | { readonly _tag: "Fail"; readonly problem: Recording.ReplayProblem }

/**
 * One replayed attempt driven for a shell with an engine ({@link MemoryReplay.drive}): a
 * {@link ReplayAttempt} whose lines that need no waiting go straight to the engine's hooks, and
 * whose recorded ends come decoded (an error that does not decode as one of the event channel's
 * fails the attempt as not valid). The shell loops on {@link next} and waits where it says.
 *
 * @since 0.1.0
 * @category models
 */
export class ReplayDriver<E extends { readonly _tag: string }, F extends E> {
  /** The frame waiting for the engine's flow. */
  private frame: Extract<ReplayStep, { readonly _tag: "Text" | "Binary" | "NamedEvent" }> | undefined = undefined

  constructor(
    readonly attempt: ReplayAttempt,
    private readonly hooks: ReplayHooks,
    private readonly decoders: Pick<ReplayDecoders<unknown, E, E, F>, "error" | "isChannelError">
  ) {}

  /** What to wait on next (the lines before it handed to the hooks). */
  next(): DriverStep<F> {
    for (;;) {
      const step = this.attempt.poll()
      switch (step._tag) {
        case "Sleep":
        case "AwaitAnswer":
        case "Fail":
          return step
        case "Open":
          this.hooks.open()
          break
        case "TooLarge":
          this.hooks.tooLarge(step.size)
          break
        case "Alive":
          this.hooks.alive()
          break
        case "Text":
        case "Binary":
        case "NamedEvent":
          this.frame = step
          return { _tag: "Frame" }
        case "End": {
          const end = this.ending(step.end)
          if (end !== undefined) return { _tag: "End", end }
          // Not decoded: the next poll fails the attempt.
          this.attempt.notDecoded()
          break
        }
      }
    }
  }

  /** Hands the engine the frame of the last `Frame` step. */
  deliver(): void {
    const frame = this.frame
    this.frame = undefined
    if (frame === undefined) return
    if (frame._tag === "NamedEvent") this.hooks.namedEvent(frame.event, frame.data)
    else this.hooks.frame(frame._tag === "Text" ? frame.text : frame.bytes)
  }

  /** The delay of the last `Sleep` passed. */
  slept(): void {
    this.attempt.slept()
  }

  /** The application answered (an answer written on the replayed connection). */
  answered(data: Recording.AnswerData): void {
    this.attempt.answered(data)
  }

  /** No answer came within the timeout of the last `AwaitAnswer` (`waited`: its description). */
  noAnswer(waited: string): void {
    this.attempt.noAnswer(waited)
  }

  /** The recorded end as the engine's ending, its error decoded (`undefined`: it does not decode). */
  private ending(
    recorded: Extract<ReplayStep, { readonly _tag: "End" }>["end"]
  ): Connection.Ending<F, Extract<F, { readonly _tag: "ConnectTimeout" }>> | undefined {
    switch (recorded._tag) {
      case "End":
        return { _tag: "End", reason: recorded.reason }
      case "Fatal": {
        const error = this.channelError(recorded.error)
        return error === undefined ? undefined : { _tag: "Fatal", error, reason: recorded.reason }
      }
      case "Retry":
        return { _tag: "Retry", error: recorded.cause }
      case "RetryConnectTimeout": {
        const error = this.channelError(recorded.error)
        return error !== undefined && isConnectTimeout(error) ? { _tag: "Retry", error, connectTimeout: true } : undefined
      }
      case "Defect":
        return { _tag: "Defect", defect: new Error("replayed defect") }
    }
  }

  private channelError(encoded: Recording.EncodedError): F | undefined {
    const error = this.decoders.error(encoded)
    return error !== undefined && this.decoders.isChannelError(error) ? error : undefined
  }
}

const isConnectTimeout = <F extends { readonly _tag: string }>(
  error: F
): error is Extract<F, { readonly _tag: "ConnectTimeout" }> => error._tag === "ConnectTimeout"
