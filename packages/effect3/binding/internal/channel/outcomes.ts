/**
 * How the SDK's transports' attempts end, as the engine's outcomes: the protocol core's
 * attempts (`WebSocketAttempt`, `SseAttempt`) decide which end applies, and build it with these,
 * the SDK's errors. One object for every attempt.
 */
import * as Redacted from "effect/Redacted"
import type { Outcomes } from "effect-agent-session-shell"
import { ConnectTimeout, FrameTooLarge, HandshakeRejected, MalformedFrame, Superseded } from "../../../src/Errors.js"
import type { Settings } from "./settings.js"
import { type AttemptOutcome, End, Fatal, Retry } from "./transport.js"

/** The SDK's outcomes of an attempt, its key a `Redacted`. */
export const outcomes: Outcomes.Outcomes<Redacted.Redacted<string>, AttemptOutcome, Settings> = {
  reveal: (key) => Redacted.value(key),
  ended: () => End("closed-by-service"),
  rejected: (code, reason) => Fatal(new HandshakeRejected({ code, reason }), "handshake-rejected"),
  superseded: (reason) => Fatal(new Superseded({ reason }), "superseded"),
  tooLarge: (size, limit) => Fatal(new FrameTooLarge({ size, limit }), "failed"),
  malformed: (message) => Fatal(new MalformedFrame({ raw: "", message }), "failed"),
  retry: (message) => Retry(message),
  timedOut: (settings) => Retry(new ConnectTimeout({ timeout: settings.connectTimeout }))
}
