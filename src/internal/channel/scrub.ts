/**
 * Frame errors without the key, should the service ever echo it in a frame.
 */
import * as Redacted from "effect/Redacted"
import { Secrets } from "effect-agent-session-core"
import { EventDecodeError, type FrameError, MalformedFrame, UnknownEvent } from "../../Errors.js"

/** A frame error without the key (`Secrets.redactFields` over the fields that carry the service's text). */
export const scrubFrameError = (error: FrameError, key: Redacted.Redacted<string>): FrameError => {
  const secret = Redacted.value(key)
  switch (error._tag) {
    case "FrameTooLarge":
      return error
    case "MalformedFrame": {
      const fields = Secrets.redactFields({ raw: error.raw, message: error.message }, secret)
      return fields === undefined ? error : new MalformedFrame(fields)
    }
    case "EventDecodeError": {
      const fields = Secrets.redactFields({ raw: error.raw, message: error.message }, secret)
      return fields === undefined ? error : new EventDecodeError({ event: error.event, ...fields })
    }
    case "UnknownEvent": {
      const fields = Secrets.redactFields({ event: error.event, raw: error.raw }, secret)
      return fields === undefined ? error : new UnknownEvent(fields)
    }
  }
}
