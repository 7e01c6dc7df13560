/**
 * Shared fixtures for tests of the whole SDK: a session to attach to without creating it, and
 * the capture of everything a caller could see (every log line, every span).
 */
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { SessionId, SessionInfo } from "../../src/Session.js"

/** A session the SDK can attach to without creating it. */
export const sessionInfo = (sessionId: string): SessionInfo =>
  new SessionInfo({
    session_id: SessionId.make(sessionId),
    status: Option.none(),
    start_time: Option.none(),
    end_time: Option.none(),
    error: Option.none()
  })

/** A logger that keeps every line, in two formats (logfmt and structured), with annotations and causes. */
export const capture = (lines: Array<string>): Logger.Logger<unknown, void> =>
  Logger.make((options) => {
    lines.push(Logger.logfmtLogger.log(options))
    lines.push(JSON.stringify(Logger.structuredLogger.log(options)))
  })

/** A tracer, over the current one, that keeps every span it makes. */
export const spying = (spans: Array<Tracer.Span>): Effect.Effect<Tracer.Tracer> =>
  Effect.map(Effect.tracer, (base) =>
    Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        const span = base.span(name, parent, context, links, startTime, kind, options)
        spans.push(span)
        return span
      },
      context: base.context
    }))
