/**
 * Frame errors without the key, should the service ever echo it in a frame.
 */
import * as Redacted from "effect/Redacted"
import { EventDecodeError, type FrameError, MalformedFrame, redactSecrets, UnknownEvent } from "../../Errors.js"

/** A frame error without the key. */
export const scrubFrameError = (error: FrameError, key: Redacted.Redacted<string>): FrameError => {
  const secret = Redacted.value(key)
  if (secret.length === 0) return error
  switch (error._tag) {
    case "FrameTooLarge":
      return error
    case "MalformedFrame":
      return error.raw.includes(secret) || error.message.includes(secret)
        ? new MalformedFrame({ raw: redactSecrets(error.raw, [secret]), message: redactSecrets(error.message, [secret]) })
        : error
    case "EventDecodeError":
      return error.raw.includes(secret) || error.message.includes(secret)
        ? new EventDecodeError({
          event: error.event,
          raw: redactSecrets(error.raw, [secret]),
          message: redactSecrets(error.message, [secret])
        })
        : error
    case "UnknownEvent":
      return error.raw.includes(secret) || error.event.includes(secret)
        ? new UnknownEvent({ event: redactSecrets(error.event, [secret]), raw: redactSecrets(error.raw, [secret]) })
        : error
  }
}
