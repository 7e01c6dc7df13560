/**
 * Issue 13 item 2: every error met after a session was created carries its id and whether it
 * may still be running at the service.
 */
import * as Errors from "../Errors.js"

/** Whether the session may still be running after this error ended the caller's watch of it. */
const mayStillBeRunning = (error: Errors.EventStreamError): boolean =>
  // A refusal at the upgrade that says there is no such session (400, 404, 410): nothing runs.
  !(error._tag === "HandshakeRejected" && (error.code === 400 || error.code === 404 || error.code === 410))

/** The error, with the session's id and whether it may still be running, where it has room for them. */
export const inSession = (error: Errors.EventStreamError, sessionId: string): Errors.EventStreamError => {
  const context = { sessionId, mayStillBeRunning: mayStillBeRunning(error) }
  switch (error._tag) {
    case "MissingCredentials":
      return new Errors.MissingCredentials({ ...error, ...context })
    case "MissingAgentKey":
      return new Errors.MissingAgentKey({ ...error, ...context })
    case "MalformedFrame":
      return new Errors.MalformedFrame({ ...error, ...context })
    case "EventDecodeError":
      return new Errors.EventDecodeError({ ...error, ...context })
    case "FrameTooLarge":
      return new Errors.FrameTooLarge({ ...error, ...context })
    case "UnknownEvent":
      return new Errors.UnknownEvent({ ...error, ...context })
    case "HandshakeRejected":
      return new Errors.HandshakeRejected({ ...error, ...context })
    case "ConnectTimeout":
      return new Errors.ConnectTimeout({ ...error, ...context })
    case "ConnectionLost":
      return new Errors.ConnectionLost({ ...error, ...context })
    case "NeverConnected":
      return new Errors.NeverConnected({ ...error, mayStillBeRunning: true })
    case "InsecureTransport":
      return error
  }
}
