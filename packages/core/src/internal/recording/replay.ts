/**
 * Replaying a recording in memory (`Recording.ReplayPass` and the rules a shell applies with it:
 * the recorded errors' tags, a recorded connection's end, answers compared). Re-exported by
 * `Recording`.
 */
import type { CloseReason } from "../connection.js"
import { difference } from "./difference.js"
import type { AnswerData, AnswerEntry, CloseEntry, EncodedError, Entry, JsonObject } from "./model.js"
import type { Done, Invalid, Numbered, Reader } from "./reader.js"
import { scrubValue } from "./scrub.js"

// ---------------------------------------------------------------------------
// Replaying a recording in memory
// ---------------------------------------------------------------------------

/**
 * Why a replay cannot go on: the recording is not valid at a line (`Invalid`), or the
 * application did not do what the recording holds there (`Mismatch`). The editions turn them into
 * their `InvalidRecording` and `ReplayMismatch`.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayProblem =
  | { readonly _tag: "Invalid"; readonly line: number; readonly reason: string }
  | {
    readonly _tag: "Mismatch"
    readonly line: number
    readonly subject: "answer" | "create" | "connection"
    /** What the recording has there (JSON, or a description). */
    readonly expected: string
    /** What the application did (JSON, or a description). */
    readonly actual: string
    /** One line per difference (`field: expected X, got Y`). */
    readonly difference: string
  }

const invalidAt = (line: number, reason: string): ReplayProblem => ({ _tag: "Invalid", line, reason })

const connectionMismatch = (line: number, expected: string, actual: string): ReplayProblem => ({
  _tag: "Mismatch",
  line,
  subject: "connection",
  expected,
  actual,
  difference: `expected ${expected}, got ${actual}`
})

/**
 * The error tags a create can fail with, as the editions name them (their `CreateSessionError`:
 * a time-out of a create is `OutcomeUnknown`). A `create-failed` line with another tag is not valid.
 *
 * @since 0.1.0
 * @category models
 */
export const createErrorTags: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "MissingCredentials",
  "MissingAgentKey",
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "PayloadTooLarge",
  "RateLimited",
  "ServerError",
  "UnexpectedStatus",
  "TransportError",
  "ResponseDecodeError",
  "OutcomeUnknown",
  "ResponseTooLarge"
])

/**
 * The error tags the event channel can end with (the editions' `EventStreamError`, and
 * `ConnectTimeout`, the input of their reconnect schedule).
 *
 * @since 0.1.0
 * @category models
 */
export const eventChannelErrorTags: ReadonlySet<string> = new Set([
  "MalformedFrame",
  "EventDecodeError",
  "FrameTooLarge",
  "UnknownEvent",
  "MissingCredentials",
  "MissingAgentKey",
  "HandshakeRejected",
  "Superseded",
  "ConnectTimeout",
  "ConnectionLost",
  "NeverConnected",
  "BufferOverflow"
])

/**
 * The reasons a connection ends for good (`Connection.CloseReason`).
 *
 * @since 0.1.0
 * @category models
 */
export const closeReasons: ReadonlySet<string> = new Set([
  "complete",
  "closed-by-caller",
  "closed-by-service",
  "error-event",
  "connection-lost",
  "handshake-rejected",
  "superseded",
  "failed"
] satisfies ReadonlyArray<CloseReason>)

/**
 * What a recorded create answers: the session (`Created`, JSON as recorded), the error it got
 * (`CreateFailed`: the application may create again, the next create line answers it), nothing
 * recorded (`NotRecorded`: a create the pass could not read, whose problem the first connection
 * reports: the shell answers the header's session), or no create where the recording goes on
 * with something else (`Unrecorded`: a recording of `attach`, or a create after the recorded
 * ones): the shell stops the replay with the `Mismatch` (the first connection reports it too).
 *
 * @since 0.1.0
 * @category models
 */
export type CreateAnswer =
  | { readonly _tag: "Created"; readonly line: number; readonly session: JsonObject }
  | { readonly _tag: "CreateFailed"; readonly line: number; readonly error: EncodedError }
  | { readonly _tag: "NotRecorded" }
  | { readonly _tag: "Unrecorded"; readonly problem: ReplayProblem }

/**
 * The `Mismatch` of a create where the recording holds none at `line`: a recording of `attach`
 * (`creates` 0), or a create after the `creates` the recording answered. Both replays (in memory,
 * over sockets) report it alike.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unrecordedCreate = (line: number, creates: number): ReplayProblem => {
  const expected = creates === 0
    ? "an attach (the recording has no create)"
    : `no create after the ${creates} recorded`
  return { _tag: "Mismatch", line, subject: "create", expected, actual: "a create request", difference: `expected ${expected}, got a create request` }
}

/**
 * The `Mismatch` of an answer the application gave that the recording does not hold: the recorded
 * connection `conn` ends at `line` without one (the recording never answered that request).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unrecordedAnswer = (line: number, conn: number, given: AnswerData): ReplayProblem => {
  const actual = JSON.stringify(given)
  const expected = `no answer: connection ${conn} ends here without one`
  return {
    _tag: "Mismatch",
    line,
    subject: "answer",
    expected,
    actual,
    difference: `expected ${expected}, got the answer ${actual} (the recording never answered that request)`
  }
}

/**
 * The application's answers on a replayed connection, in the order given, waiting to be compared
 * with the recorded ones: each recorded answer is compared with the OLDEST answer not compared
 * yet (two requests pending at once are answered, and compared, in order). At most `max` are kept;
 * {@link give} refuses more.
 *
 * @since 0.1.0
 * @category models
 */
export class GivenAnswers {
  private readonly queue: Array<AnswerData> = []
  constructor(readonly max: number = Number.POSITIVE_INFINITY) {}
  /** How many wait. */
  get size(): number {
    return this.queue.length
  }
  /** Keeps an answer given; false when `max` are kept already. */
  give(data: AnswerData): boolean {
    if (this.queue.length >= this.max) return false
    this.queue.push(data)
    return true
  }
  /** The oldest answer not compared yet, taken. */
  take(): AnswerData | undefined {
    return this.queue.shift()
  }
  /** The oldest answer not compared yet, left in place. */
  peek(): AnswerData | undefined {
    return this.queue[0]
  }
}

/**
 * Whether an answer given is one the recording never holds, about to play `entry` (at `line`) of
 * connection `conn`, `next` the line after it: an answer waits, and the recorded connection ends
 * without another answer line (`entry` is its close, or `next` is). Checked before the last line
 * ahead of a close too, as the application's engine may end the attempt on it (`complete`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const checkUnrecorded = (
  entry: Entry,
  line: number,
  conn: number,
  next: Numbered | Done | Invalid,
  given: GivenAnswers
): ReplayProblem | undefined => {
  const first = given.peek()
  if (first === undefined || entry.type === "answer") return undefined
  if (entry.type === "close") return unrecordedAnswer(line, conn, first)
  if (next._tag === "Entry" && next.entry.type === "close") return unrecordedAnswer(next.line, conn, first)
  return undefined
}

/**
 * How a recorded connection ended, for the shell to end its attempt alike: for good (`End`,
 * `Fatal` with the recorded error, its tag one of {@link eventChannelErrorTags}), to be retried
 * (`Retry`: a description of the drop, or the recorded `ConnectTimeout`), by the application
 * (`AwaitClose`: wait for it), or a defect of the transport (`Defect`).
 *
 * @since 0.1.0
 * @category models
 */
export type RecordedEnd =
  | { readonly _tag: "End"; readonly reason: CloseReason }
  | { readonly _tag: "Fatal"; readonly reason: CloseReason; readonly error: EncodedError }
  | { readonly _tag: "Retry"; readonly cause: string }
  | { readonly _tag: "RetryConnectTimeout"; readonly error: EncodedError }
  | { readonly _tag: "AwaitClose" }
  | { readonly _tag: "Defect" }

/**
 * How a `close` line's outcome ends the replayed attempt, or why it is not valid.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordedEnd = (close: CloseEntry, line: number): RecordedEnd | ReplayProblem => {
  const outcome = close.outcome
  const broken = (reason: string) => invalidAt(line, `close: ${reason}`)
  switch (outcome._tag) {
    case "End":
      return closeReasons.has(outcome.reason)
        ? { _tag: "End", reason: outcome.reason as CloseReason }
        : broken(`unknown reason "${outcome.reason}"`)
    case "Fatal":
      return eventChannelErrorTags.has(outcome.error._tag) && closeReasons.has(outcome.reason)
        ? { _tag: "Fatal", reason: outcome.reason as CloseReason, error: outcome.error }
        : broken("the error is not one of the event channel's")
    case "Retry":
      if (outcome.cause !== undefined) return { _tag: "Retry", cause: outcome.cause }
      return outcome.error?._tag === "ConnectTimeout"
        ? { _tag: "RetryConnectTimeout", error: outcome.error }
        : broken("the error is not one an attempt is retried for")
    case "Interrupted":
      return { _tag: "AwaitClose" }
    case "Defect":
      return { _tag: "Defect" }
  }
}

/**
 * Whether a value is a {@link ReplayProblem} (and not a step of the replay).
 *
 * @since 0.1.0
 * @category guards
 */
export const isReplayProblem = (u: unknown): u is ReplayProblem =>
  typeof u === "object" && u !== null && "_tag" in u && (u._tag === "Invalid" || u._tag === "Mismatch")

/**
 * The recorded answer against the application's: the `Mismatch` to report, or nothing when they
 * are the same. `given` is the application's answer as the recording would keep it (the
 * recording's `redact` applied), `undefined` when none came within `waited` (a description).
 *
 * @since 0.1.0
 * @category combinators
 */
export const checkAnswer = (
  recorded: AnswerEntry,
  line: number,
  given: AnswerData | undefined,
  waited: string
): ReplayProblem | undefined => {
  const expected = JSON.stringify(recorded.data)
  if (given === undefined) {
    return {
      _tag: "Mismatch",
      line,
      subject: "answer",
      expected,
      actual: `no answer within ${waited}`,
      difference: `expected the answer ${expected}, got no answer within ${waited}`
    }
  }
  const diff = difference(recorded.data, given)
  return diff.length === 0
    ? undefined
    : { _tag: "Mismatch", line, subject: "answer", expected, actual: JSON.stringify(given), difference: diff }
}

/**
 * One pass over a recording, replaying one session in memory, without I/O of its own beyond the
 * {@link Reader}'s: the create lines answer the application's create (compared with the recorded
 * request), then each attempt of the application's engine plays the next recorded connection. The
 * shell decodes what the pass hands it (the session, the errors), sleeps until each line's `t`,
 * feeds frames to its engine and compares answers ({@link checkAnswer}).
 *
 * A problem met while creating (a create that differed, a line not valid) is kept as
 * {@link failure} and reported by the first connection: the create itself answers as recorded.
 *
 * @since 0.1.0
 * @category models
 */
export class ReplayPass {
  /** `create`: the create lines are next; `events`: the connections are. */
  phase: "create" | "events" = "create"
  /** What ends the next connection (a create that differed, a line not valid). */
  failure: ReplayProblem | undefined = undefined
  /** The create lines answered so far. */
  creates = 0

  /** A pass over an open reader; without one, every connection fails with `failure`. */
  constructor(readonly reader: Reader | undefined, failure?: ReplayProblem) {
    if (failure !== undefined) {
      this.phase = "events"
      this.failure = failure
    }
  }

  /** Keeps the first problem met (later ones follow from it). */
  fail(problem: ReplayProblem): void {
    this.failure ??= problem
  }

  /**
   * Answers the application's create: `actual` is its request as the recording encodes it (the
   * edition's schema encoded). It is compared scrubbed as the recorder scrubbed the recorded one
   * (`secrets`: the keys the replaying application holds, if known), like with like. A different
   * request is kept as a `Mismatch` of `create`.
   */
  create(actual: unknown, secrets: ReadonlyArray<string> = []): CreateAnswer {
    const reader = this.reader
    if (reader === undefined) return { _tag: "NotRecorded" }
    const next = reader.peek()
    if (next._tag === "Invalid") {
      this.phase = "events"
      this.failure = invalidAt(next.line, next.reason)
      return { _tag: "NotRecorded" }
    }
    if (next._tag !== "Entry" || next.entry.type !== "create") {
      // No create here (a recording of `attach`, or after the recorded ones): nothing to answer.
      const problem = unrecordedCreate(next.line, this.creates)
      this.phase = "events"
      this.failure = problem
      return { _tag: "Unrecorded", problem }
    }
    reader.take()
    this.creates += 1
    // Like with like: the application's request as the recorder would have written it.
    const scrubbed = scrubValue(actual, secrets)
    const diff = difference(next.entry.request, scrubbed)
    if (diff.length > 0) {
      this.failure = {
        _tag: "Mismatch",
        line: next.line,
        subject: "create",
        expected: JSON.stringify(next.entry.request),
        actual: JSON.stringify(scrubbed),
        difference: diff
      }
    }
    const result = reader.take()
    if (result._tag === "Entry" && result.entry.type === "created") {
      this.phase = "events"
      return { _tag: "Created", line: result.line, session: result.entry.session }
    }
    if (result._tag === "Entry" && result.entry.type === "create-failed") {
      if (createErrorTags.has(result.entry.error._tag)) return { _tag: "CreateFailed", line: result.line, error: result.entry.error }
      this.fail(invalidAt(result.line, "create-failed: the error is not one a create can fail with"))
    } else {
      this.fail(
        result._tag === "Invalid"
          ? invalidAt(result.line, result.reason)
          : invalidAt(result.line, "a create line without its result (created or create-failed)")
      )
    }
    this.phase = "events"
    return { _tag: "NotRecorded" }
  }

  /**
   * Where the application's next connection (to `sessionId`) starts in the recording: its
   * `connect` line, or why it cannot be played (the problem kept from the create, a connection to
   * another session, no more connections, a recorded connection the application's ended before).
   * What is left of the previous connection is skipped: the engine ended it itself, as it did
   * when it was recorded.
   */
  nextConnection(sessionId: string, recordedSessionId: string): Numbered | ReplayProblem {
    const reader = this.reader
    if (this.failure !== undefined || reader === undefined) {
      const failure = this.failure ?? invalidAt(0, "the recording cannot be read again")
      if (reader !== undefined) this.failure = undefined
      return failure
    }
    if (sessionId !== recordedSessionId) {
      return connectionMismatch(1, `a connection to session ${recordedSessionId}`, `one to ${sessionId}`)
    }
    for (;;) {
      const next = reader.take()
      if (next._tag === "Invalid") return invalidAt(next.line, next.reason)
      if (next._tag === "Done" || next.entry.type === "end") {
        return connectionMismatch(next.line, "no more connections (the recording ends here)", "the application connected again")
      }
      switch (next.entry.type) {
        case "connect":
          return next
        case "frame":
        case "answer":
        case "too-large":
          return connectionMismatch(
            next.line,
            "the recorded connection to go on here",
            "the application's connection ended before it"
          )
        default:
          // `close`, `alive`, `open` of a connection the engine ended: nothing to play.
          break
      }
    }
  }

  /**
   * Whether an answer given is one the recording never holds, about to play `entry` (at `line`) of
   * connection `conn`: {@link checkUnrecorded} with the line after it.
   */
  unrecorded(entry: Entry, line: number, conn: number, given: GivenAnswers): ReplayProblem | undefined {
    if (given.size === 0 || this.reader === undefined) return undefined
    return checkUnrecorded(entry, line, conn, this.reader.peek(), given)
  }

  /**
   * The next line of the connection being played (`open`, `frame`, `too-large`, `alive`,
   * `answer`, `close`), or why there is none: the file ends, or a line of another kind comes
   * before the connection `conn` closed.
   */
  nextInConnection(conn: number): Numbered | ReplayProblem {
    const reader = this.reader
    if (reader === undefined) return invalidAt(0, "the recording cannot be read again")
    const next = reader.take()
    if (next._tag === "Invalid") return invalidAt(next.line, next.reason)
    if (next._tag === "Done") return invalidAt(next.line, "the recording ends before its connection closed")
    switch (next.entry.type) {
      case "connect":
      case "end":
      case "create":
      case "created":
      case "create-failed":
        return invalidAt(next.line, `a ${next.entry.type} line before connection ${conn} closed`)
      default:
        return next
    }
  }
}
