/**
 * The session entity's `Respond`: an answer to a pending request, recorded in the log once, then
 * handed to the channel.
 */
import * as Effect from "effect/Effect"
import { type Entity, Errors, SessionEvent } from "../../src/internal/line.js"
import { ClusterTally } from "effect-agent-session-shell"
import type * as SessionEntity from "../SessionEntity.js"
import type { Activation } from "./activation.js"
import { type AnswerEncoded, requestKey, toAnswer } from "./eventLogMemory.js"

const { sameAnswer } = ClusterTally

export const respond = (activation: Activation) => (envelope: Entity.Request<typeof SessionEntity.Respond>) =>
  respondWith(activation, envelope.payload.request, envelope.payload.answer)

/** `Respond` with its payload: the answer `answer` to `request`. */
export const respondWith = (
  activation: Activation,
  request: SessionEvent.ExternalResourceRequested,
  answer: AnswerEncoded
) =>
  Effect.gen(function*() {
    const { load, log, sessionId, tally } = activation
    yield* load
    const key = requestKey(request)
    const refuse = (reason: "never-received" | "already-answered") =>
      new Errors.RequestNotPending({
        resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
        actionSessionId: request.action_session_id,
        reason
      })
    // Looked up before the open requests: a caller retrying after losing the reply (or the
    // cluster delivering the message again) may arrive after the grant settled the request. The
    // same answer again: done already; a different one: the first answer stands.
    const decision = ClusterTally.decideAnswer(tally, request, answer)
    if (decision === "known") return
    if (decision !== "record") return yield* refuse(decision)
    const recorded = yield* log.saveAnswer(sessionId, request, answer)
    if (!recorded) {
      // An answer was recorded first: by another activation (a hand-over), or by an earlier
      // attempt of this same call whose reply was lost (interrupted after the insert: its
      // runner froze, the shard moved, the caller's attempt timed out). Nothing guarantees it
      // reached this session's channel: the activation that recorded it may not hold the
      // channel, and this one read the log before it was recorded. The same answer: it is
      // handed to the channel here (below), as a recorded answer is on a take-over.
      const stored = (yield* log.answers(sessionId)).find((a) => requestKey(a.request) === key)
      if (stored === undefined || !sameAnswer(stored.answer, answer)) return yield* refuse("already-answered")
    }
    // Learned meanwhile here, from the log (the same answer: the first recorded wins): by this
    // activation's own `Respond`, the run's start, or the answer watch, which reads the answers
    // of a session waiting for one and may read this one between its insert and this line. It
    // was handed to the channel there.
    if (tally.answered.has(key)) return
    tally.answered.set(key, answer)
    // Handed to the channel when this runner holds it; otherwise the runner that takes the
    // session sends it (it is in the log).
    if (activation.running !== undefined) yield* Effect.ignore(activation.running.respond(request, toAnswer(answer)))
  })
