/**
 * The reporter of `--json` (`Render.json`): one JSON object per line on standard output
 * (`Sanitize.json`), errors also on standard error as one line.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type { Progress, Reporter, Sink } from "./renderTypes.js"
import * as Sanitize from "../Sanitize.js"
import { clean } from "./renderText.js"

/** `Render.eventJson`: an event as plain JSON, with the SDK tag, the time and the action count. */
export const eventJson = (event: SessionEvent.SessionEvent, progress: Progress): Record<string, unknown> => {
  const wire = SessionEvent.toWire(event)
  return {
    kind: "event",
    event: wire.event,
    tag: event._tag,
    data: wire.payload,
    ...(event._tag === "ActionRun" ? { action: progress.actions, maxActions: Option.getOrNull(progress.maxActions) } : {}),
    at: new Date().toISOString()
  }
}

/** `Render.json`: the NDJSON reporter. */
export const json = (sink: Sink, options: { readonly statusNotes?: boolean } = {}): Reporter => {
  const emit = (value: Record<string, unknown>) => Effect.sync(() => sink.out(Sanitize.json(value) + "\n"))
  return {
    status: (text) => options.statusNotes === true ? Effect.sync(() => sink.err(text + "\n")) : Effect.void,
    created: (sessionId, progress) =>
      emit({ kind: "session", sessionId, maxActions: Option.getOrNull(progress.maxActions) }),
    event: (event, progress) => emit(eventJson(event, progress)),
    state: (state) =>
      emit({
        kind: "state",
        state: state._tag,
        ...(state._tag === "Reconnecting" ? { attempt: state.attempt, lastError: state.lastError } : {}),
        ...(state._tag === "Open"
          ? {
            reconnects: state.reconnects,
            downtimeMs: Option.getOrNull(Option.map(state.downtime, Duration.toMillis))
          }
          : {}),
        ...(state._tag === "Closed" ? { reason: state.reason } : {})
      }),
    answered: (request, answer, source) =>
      emit({
        kind: "answer",
        resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
        actionSessionId: request.action_session_id,
        granted: answer._tag === "Grant",
        input: answer._tag === "Grant" ? Option.getOrNull(answer.input) : null,
        source
      }),
    note: (text) => emit({ kind: "note", message: text }),
    suspend: (effect) => effect,
    outcome: (outcome, progress) => {
      const parsed = SessionEvent.responseTypeRaw(outcome.type) === "JSON"
        ? SessionEvent.parseJsonResponse(outcome.complete)
        : undefined
      return emit({
        kind: "outcome",
        sessionId: outcome.sessionId,
        type: SessionEvent.responseTypeRaw(outcome.type),
        response: outcome.response,
        ...(parsed !== undefined && parsed._tag === "Right" ? { responseJson: parsed.right } : {}),
        totalCost: Option.getOrNull(outcome.totalCost),
        actions: outcome.actions,
        maxActions: Option.getOrNull(progress.maxActions)
      })
    },
    failure: (message, tag, code, progress) =>
      Effect.zipRight(
        emit({ kind: "error", tag, message, exitCode: code, actions: progress.actions, events: progress.events }),
        Effect.sync(() => sink.err(`error: ${clean(message)}\n`))
      ),
    interrupted: (progress) =>
      emit({
        kind: "interrupted",
        sessionId: Option.getOrNull(progress.sessionId),
        ...(Option.isSome(progress.creating) ? { sessionMayExist: true, idempotencyKey: progress.creating.value } : {}),
        actions: progress.actions,
        maxActions: Option.getOrNull(progress.maxActions),
        events: progress.events,
        lastAction: Option.getOrNull(Option.map(progress.lastAction, (a) => ({ name: a.name, content: a.content }))),
        lastThought: Option.getOrNull(progress.lastThought)
      }),
    metrics: (readings) => emit({ kind: "metrics", metrics: readings })
  }
}
