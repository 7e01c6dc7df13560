/**
 * Issue 13 item 2: every error met after a session was created carries its id and whether it
 * may still be running at the service.
 */
import * as Errors from "../Errors.js"

/** Whether the session may still be running after this error ended the caller's watch of it. */
const mayStillBeRunning = (error: Errors.EventStreamError): boolean =>
  // A refusal at the upgrade that says there is no such session (400, 404, 410): nothing runs.
  !(error._tag === "HandshakeRejected" && (error.code === 400 || error.code === 404 || error.code === 410))

/**
 * The error, with the session's id and whether it may still be running, where it has room for
 * them. Fields are copied one by one: an error's `message` is not an own enumerable property.
 */
export const inSession = (error: Errors.EventStreamError, sessionId: string): Errors.EventStreamError => {
  const context = { sessionId, mayStillBeRunning: mayStillBeRunning(error) }
  switch (error._tag) {
    case "MissingCredentials":
      return new Errors.MissingCredentials({ operation: error.operation, variable: error.variable, ...context })
    case "MissingAgentKey":
      return new Errors.MissingAgentKey({ agentId: error.agentId, ...context })
    case "MalformedFrame":
      return new Errors.MalformedFrame({ raw: error.raw, message: error.message, ...context })
    case "EventDecodeError":
      return new Errors.EventDecodeError({ event: error.event, raw: error.raw, message: error.message, ...context })
    case "FrameTooLarge":
      return new Errors.FrameTooLarge({ size: error.size, limit: error.limit, ...context })
    case "UnknownEvent":
      return new Errors.UnknownEvent({ event: error.event, raw: error.raw, ...context })
    case "HandshakeRejected":
      return new Errors.HandshakeRejected({ code: error.code, reason: error.reason, ...context })
    case "Superseded":
      return new Errors.Superseded({ reason: error.reason, ...context })
    case "ConnectionLost":
      return new Errors.ConnectionLost({ attempts: error.attempts, lastError: error.lastError, ...context })
    case "NeverConnected":
      return new Errors.NeverConnected({ sessionId: error.sessionId, attempts: error.attempts, lastError: error.lastError, mayStillBeRunning: true })
  }
}
