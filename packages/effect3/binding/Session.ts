/**
 * Sessions: the create-session request, the session the service returns, and its status.
 *
 * The declarations of the public module `Session`, written once for both editions:
 * each edition's `src/Session.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Model } from "effect-agent-session-core"
import { intAtLeast, NumberAsString, optionFromOptionalKey, union } from "../src/internal/line.js"
import { HttpUrlString, NonBlankString, openEnum, parseTimestamp } from "../src/internal/schema.js"

/**
 * The identifier of a session (`session_id` on the wire).
 *
 * @since 0.1.0
 * @category models
 */
export const SessionId = Schema.String.pipe(Schema.brand("effect-agent-session/SessionId"))

/**
 * @since 0.1.0
 * @category models
 */
export type SessionId = typeof SessionId.Type

/**
 * The identifier of an action session; the document shows no other field of it.
 *
 * @since 0.1.0
 * @category models
 */
export const ActionSessionId = Schema.String.pipe(Schema.brand("effect-agent-session/ActionSessionId"))

/**
 * @since 0.1.0
 * @category models
 */
export type ActionSessionId = typeof ActionSessionId.Type

/**
 * A session status: the three values the document names, or `{ _tag: "Unrecognized", raw }` for
 * any other. The SDK assumes no transitions between them.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionStatus = openEnum(...Model.sessionStatuses)

/**
 * @since 0.1.0
 * @category models
 */
export type SessionStatus = typeof SessionStatus.Type

/**
 * The optional schedule of the observed dialect's create-session body (`auto_trigger`). Sent
 * in either dialect when given (the document does not name it: a service that does not know it
 * is expected to ignore it).
 *
 * @since 0.1.0
 * @category models
 */
export const AutoTrigger = Schema.Struct({
  /** Minutes between runs. */
  interval: Schema.optional(Schema.Number),
  /** ISO time after which no run starts. */
  end_at: Schema.optional(Schema.String),
  start_now: Schema.optional(Schema.Boolean),
  web_hook_url: Schema.optional(Schema.String)
})

/**
 * The body of create session, validated before anything is sent: `start_url` an absolute
 * http(s) URL, `max_actions` an integer >= 1, `goal` not blank.
 *
 * @since 0.1.0
 * @category models
 */
export class CreateSessionRequest
  extends Schema.Class<CreateSessionRequest>("effect-agent-session/CreateSessionRequest")({
    start_url: HttpUrlString,
    max_actions: intAtLeast(Model.minMaxActions, Model.maxActionsMessage),
    goal: NonBlankString,
    auto_trigger: Schema.optional(AutoTrigger)
  })
{}

/**
 * What a caller passes to create a session: a plain object, validated before anything is sent.
 *
 * @since 0.1.0
 * @category models
 */
export type CreateSessionInput = typeof CreateSessionRequest.Encoded

const optionalString = optionFromOptionalKey(Schema.String)

/** A timestamp as sent: a string, or a number (epoch seconds or milliseconds) kept as its string. */
const Timestamp = union([Schema.String, NumberAsString])
const optionalTimestamp = optionFromOptionalKey(Timestamp)

/**
 * A session as the create-session response describes it. The raw `start_time` and `end_time`
 * are kept; `startedAt` and `endedAt` parse them (ISO 8601 or epoch seconds/ms) as an `Option`.
 * `status` is absent in the observed dialect's response. Extra fields are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export class SessionInfo extends Schema.Class<SessionInfo>("effect-agent-session/SessionInfo")({
  session_id: SessionId,
  status: optionFromOptionalKey(SessionStatus),
  start_time: optionalTimestamp,
  end_time: optionalTimestamp,
  error: optionalString
}) {
  /**
   * `start_time` parsed, or `None` when absent or unparseable.
   *
   * @since 0.1.0
   */
  get startedAt(): Option.Option<DateTime.Utc> {
    return Option.flatMap(this.start_time, parseTimestamp)
  }

  /**
   * `end_time` parsed, or `None` when absent or unparseable.
   *
   * @since 0.1.0
   */
  get endedAt(): Option.Option<DateTime.Utc> {
    return Option.flatMap(this.end_time, parseTimestamp)
  }
}
