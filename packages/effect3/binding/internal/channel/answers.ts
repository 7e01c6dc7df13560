/**
 * Answers out: `respond` gives the answer to the protocol core (`Connection.answer`, which queues
 * it in its ledger or says why not), and the writer the core asks for (its `Write` action: at most one
 * per attempt, in the attempt's scope) writes the queued answers in order and tells the core what
 * became of each.
 */
import * as Effect from "effect/Effect"
import { Failures } from "effect-agent-session-core"
import type * as Answer from "../../../src/Answer.js"
import type * as Dialect from "../../../src/Dialect.js"
import { AnswerBufferFull, RequestNotPending, type RespondError } from "../../../src/Errors.js"
import * as Metrics from "../../../src/Metrics.js"
import * as SessionEvent from "../../../src/SessionEvent.js"
import * as Wire from "../../../src/Wire.js"
import type { AttemptHooks, Shell } from "./shell.js"

/**
 * Writes the next queued answer and tells the core: false when the writer stops. Uninterruptible:
 * an answer in flight (an SSE `POST` the service may already have processed) is never abandoned
 * half-way, which would send it twice.
 */
const writeNext = (attempt: AttemptHooks): Effect.Effect<boolean> =>
  Effect.uninterruptible(Effect.suspend(() => {
    const next = attempt.nextAnswer()
    const io = attempt.io
    if (next === undefined || io === undefined) return Effect.succeed(false)
    return Effect.matchEffect(io.send(next.frame, next.data), {
      onSuccess: (sent) => {
        attempt.answerWritten(sent)
        return Effect.as(Metrics.recordAnswer({ _tag: next.data.granted ? "Grant" : "Deny" }), true)
      },
      onFailure: (failure) => {
        if (!attempt.answerFailed(failure)) return Effect.succeed(false)
        return Effect.as(Effect.logError(Failures.answerRefusedLog(failure.message)), true)
      }
    })
  }))

/** Writes queued answers in order while the attempt lasts (forked when the core decides `Write`). */
export const writer = (attempt: AttemptHooks): Effect.Effect<void> =>
  Effect.flatMap(writeNext(attempt), (more) => more ? writer(attempt) : Effect.void)

/** `Connection.respond`: queues the answer, written at once when the attempt is open. */
export const respond = (
  shell: Shell,
  dialect: Dialect.Dialect,
  request: SessionEvent.ExternalResourceRequested,
  answer: Answer.Answer
): Effect.Effect<void, RespondError> =>
  Effect.suspend((): Effect.Effect<void, RespondError> => {
    const refusal = shell.answer(request, Wire.encodeAnswer(dialect.answerKey, request, answer), Wire.answerData(request, answer))
    if (refusal === undefined) return Effect.void
    if (refusal === "full") return Effect.fail(new AnswerBufferFull({ limit: shell.settings.answerBufferSize }))
    return Effect.fail(
      new RequestNotPending({
        resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
        actionSessionId: request.action_session_id,
        reason: refusal
      })
    )
  })
