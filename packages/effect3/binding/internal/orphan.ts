/**
 * Every error met after a session was created carries its id and whether it may still be running
 * at the service: the core's `SessionContext.added` says which fields to add, and the error is
 * rebuilt by its tag through this edition's schema of every error (`Errors.AgentSessionError`).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SessionContext } from "effect-agent-session-shell"
import * as Errors from "../../src/Errors.js"

const encode = Schema.encodeOption(Errors.AgentSessionError)
const decode = Schema.decodeUnknownOption(Errors.AgentSessionError)

/**
 * The error, with the session's id and whether it may still be running, where it has room for
 * them: its fields as encoded, those added, decoded again into the class of its tag. (Each
 * error's fields encode and decode as they are, so the rebuilt error cannot fail to decode; if it
 * did, the error would be kept as it was.)
 */
export const inSession = (error: Errors.EventStreamError, sessionId: string): Errors.EventStreamError => {
  const sameTag = (rebuilt: Errors.AgentSessionError): rebuilt is Errors.EventStreamError => rebuilt._tag === error._tag
  return Option.getOrElse(
    Option.filter(
      Option.flatMap(encode(error), (encoded) => decode({ ...encoded, ...SessionContext.added(error, sessionId) })),
      sameTag
    ),
    () => error
  )
}
