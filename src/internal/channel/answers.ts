/**
 * Answers out: `respond` queues an answer in the ledger (`ledger.ts`), and a writer, forked in
 * the attempt's scope only while there are answers to write (at most one per attempt), writes
 * them in order and records what became of each.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Answer from "../../Answer.js"
import type * as Dialect from "../../Dialect.js"
import { AnswerBufferFull, RequestNotPending, type RespondError } from "../../Errors.js"
import * as Metrics from "../../Metrics.js"
import * as SessionEvent from "../../SessionEvent.js"
import * as Wire from "../../Wire.js"
import { type Attempt, type Core, keyOf } from "./core.js"
import * as Ledger from "./ledger.js"
import { type Io, Retry } from "./transport.js"

/** How long a socket found closing may take to report its close before the attempt is dropped. */
const CLOSING_GRACE_MS = 2_000

/**
 * Writes the oldest queued answer and records what became of it: false when the attempt cannot
 * write any more. Uninterruptible: an answer in flight (an SSE `POST` the service may already
 * have processed) is never abandoned half-way, which would send it twice.
 */
const writeHead = (core: Core, attempt: Attempt, io: Io): Effect.Effect<boolean> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const head = Ledger.head(core.ledger)
    if (head === undefined) return true
    const sent = yield* Effect.either(io.send(head.frame, head.data))
    if (Either.isLeft(sent)) {
      const message = sent.left.message
      if (sent.left.closing === true) {
        // The socket is closing: its close (1000 ends, else reconnect) decides. Should no close
        // event follow within a grace period, the attempt is given up as a drop.
        const entry = yield* core.deadlines.schedule(core.clock.unsafeCurrentTimeMillis() + CLOSING_GRACE_MS, () => {
          attempt.end(Retry(`answer not written: ${message}`))
          return undefined
        })
        attempt.entries.push(entry)
        return false
      }
      if (sent.left.retry) {
        attempt.end(Retry(`answer not written: ${message}`))
        return false
      }
      core.ledger = Ledger.refused(core.ledger)
      yield* Effect.logError(`The service refused an answer (${message}): the request is pending again`)
      return true
    }
    core.ledger = Ledger.written(core.ledger, sent.right)
    yield* Metrics.recordAnswer({ _tag: head.data.granted ? "Grant" : "Deny" })
    return true
  }))

/** Writes queued answers in order while the attempt lasts. */
const writer = (core: Core, attempt: Attempt, io: Io): Effect.Effect<void> =>
  Effect.gen(function*() {
    while (Ledger.head(core.ledger) !== undefined && !attempt.ended) {
      if (!(yield* writeHead(core, attempt, io))) break
    }
    attempt.writing = false
  })

/** Starts the attempt's writer if it is open, has answers to write and none is running. */
export const startWriter = (core: Core, attempt: Attempt): Effect.Effect<void> => {
  const io = attempt.io
  if (!attempt.opened || attempt.ended || attempt.writing || io === undefined || Ledger.head(core.ledger) === undefined) {
    return Effect.void
  }
  // Claimed before the fork, so a `respond` racing with the fork's start starts no second one.
  attempt.writing = true
  // Interruptible between answers whatever `respond`'s caller is (each write is not).
  return Effect.asVoid(Effect.forkIn(Effect.interruptible(writer(core, attempt, io)), attempt.scope))
}

/** `Connection.respond`: queues the answer (U16), written at once when the attempt is open. */
export const respond = (
  core: Core,
  dialect: Dialect.Dialect,
  request: SessionEvent.ExternalResourceRequested,
  answer: Answer.Answer
): Effect.Effect<void, RespondError> =>
  Effect.suspend((): Effect.Effect<void, RespondError> => {
    const resourceType = SessionEvent.resourceTypeRaw(request.resource_type)
    const actionSessionId = request.action_session_id
    // The connection is closed: nothing can be sent any more, whatever was asked (U16).
    if (core.finished) return Effect.fail(new RequestNotPending({ resourceType, actionSessionId, reason: "channel-closed" }))
    const limit = core.settings.answerBufferSize
    const queued = Ledger.queue(core.ledger, {
      key: keyOf(request),
      frame: Wire.encodeAnswer(dialect.answerKey, request, answer),
      data: Wire.answerData(request, answer)
    }, limit)
    if (Either.isLeft(queued)) {
      return queued.left === "full"
        ? Effect.fail(new AnswerBufferFull({ limit }))
        : Effect.fail(new RequestNotPending({ resourceType, actionSessionId, reason: queued.left }))
    }
    core.ledger = queued.right
    return core.current === undefined ? Effect.void : startWriter(core, core.current)
  })
