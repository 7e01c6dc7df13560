/**
 * The reporter of a run whose standard output is not a terminal (`Render.plain`): one line per
 * event, no bar, no colours.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Metrics from "effect-agent-session/Metrics"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type { Reporter, Sink } from "./renderTypes.js"
import {
  actionsSoFar,
  clean,
  describeAnswer,
  describeState,
  eventLine,
  maxText,
  outcomeLines,
  soFarLines
} from "./renderText.js"

/** `Render.plain`: `statusNotes` says whether status notes are written (on standard error). */
export const plain = (sink: Sink, options: { readonly statusNotes?: boolean } = {}): Reporter => {
  const line = (text: string) => Effect.sync(() => sink.out(text + "\n"))
  return {
    status: (text) => options.statusNotes === true ? Effect.sync(() => sink.err(text + "\n")) : Effect.void,
    created: (sessionId, progress) => line(`session ${clean(sessionId)} created${maxText(progress)}`),
    event: (event, progress) =>
      Option.match(eventLine(event, progress), { onNone: () => Effect.void, onSome: line }),
    state: (state) => Option.match(describeState(state), { onNone: () => Effect.void, onSome: line }),
    answered: (request, answer, source) =>
      line(`answered ${clean(SessionEvent.resourceTypeRaw(request.resource_type))}: ${describeAnswer(answer, source)}`),
    note: (text) => line(clean(text)),
    suspend: (effect) => effect,
    outcome: (outcome, progress) => line("\n" + outcomeLines(outcome, progress).join("\n")),
    failure: (message, _tag, _code, progress) =>
      Effect.sync(() => {
        sink.err(`error: ${clean(message)}\n`)
        if (progress.events > 0) {
          sink.out(`Done so far: ${actionsSoFar(progress)}, ${progress.events} events\n`)
        }
      }),
    interrupted: (progress) => line("\n" + soFarLines(progress).join("\n")),
    metrics: (readings) => line("\n" + ["Metrics", ...Metrics.format(readings).map((l) => "  " + clean(l))].join("\n"))
  }
}
