/**
 * The events of a session's event channel, as one tagged union decoded with `effect/Schema`.
 *
 * Each member's fields are named exactly as the document lists them on the wire (`started` has
 * `sessionId`, `complete` has `session_id`); the `_tag` is the SDK's own. The simulator encodes
 * with the same schemas, so the wire is written once.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  ActionRun,
  AgentError,
  BrowserStarted,
  Connected,
  ExternalResourceGranted,
  ExternalResourceRequested,
  Heartbeat,
  ResponseType,
  Started,
  type Tag,
  ThoughtsAndMemories,
  totalCost,
  wireNames
} from "../binding/SessionEvent.js"
import { ResponseParseError, truncateRaw } from "./Errors.js"
import { formatIssues } from "./internal/schema.js"
import { SessionId } from "./Session.js"
import { Events } from "effect-agent-session-core"

export * from "../binding/SessionEvent.js"

/**
 * A cost: a plain non-negative finite number, no unit assumed.
 *
 * @since 0.1.0
 * @category models
 */
export const Cost = Schema.Number.pipe(
  Schema.finite({ message: () => Events.costMessages.notFinite }),
  Schema.nonNegative({ message: () => Events.costMessages.negative })
)

/** JSON of any shape, generated as JSON in property tests. */
const JsonUnknown = Schema.Unknown.annotations({
  identifier: "Json",
  arbitrary: () => (fc) => fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown)
})

const CompleteFields = Schema.TaggedStruct("Complete", {
  response: Schema.String,
  type: ResponseType,
  /** The session's cost. Absent only when `cost_summary` is present (observed dialect). */
  total_cost: Schema.optionalWith(Cost, { as: "Option", exact: true }),
  /** The observed dialect's cost breakdown, kept as sent. */
  cost_summary: Schema.optionalWith(Schema.Record({ key: Schema.String, value: JsonUnknown }), {
    as: "Option",
    exact: true
  }),
  session_id: SessionId
})

/**
 * `complete`: the agent finished. `total_cost` is required unless `cost_summary` is present;
 * `type` is open.
 *
 * @since 0.1.0
 * @category models
 */
export const Complete = Object.assign(
  CompleteFields.pipe(
    Schema.filter((c) => Option.isSome(c.total_cost) || Option.isSome(c.cost_summary), {
      message: () => Events.missingCostMessage
    })
  ),
  {
    /** Parses the response as JSON: see {@link parseJsonResponse}. */
    parseJson: (event: Complete) => parseJsonResponse(event),
    /** The cost: see {@link totalCost}. */
    totalCost: (event: Complete) => totalCost(event)
  }
)

/**
 * @since 0.1.0
 * @category models
 */
export interface Complete extends Schema.Schema.Type<typeof Complete> {}

/**
 * An event whose name the SDK does not know, kept whole: `event` is the wire name, `payload`
 * the data as sent. In strict mode it is the `UnknownEvent` error instead.
 *
 * @since 0.1.0
 * @category models
 */
export const Unrecognized = Schema.TaggedStruct("Unrecognized", {
  // Not empty: a frame without an event name is a `MalformedFrame`, so no frame could carry it.
  event: Schema.NonEmptyString.pipe(
    Schema.filter((name) => !Events.isWireName(name), { message: () => Events.unrecognizedNameMessage })
  ),
  payload: JsonUnknown
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Unrecognized extends Schema.Schema.Type<typeof Unrecognized> {}

/**
 * Every event of a session.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionEvent =
  | Started
  | BrowserStarted
  | ActionRun
  | ThoughtsAndMemories
  | Complete
  | AgentError
  | ExternalResourceRequested
  | ExternalResourceGranted
  | Heartbeat
  | Connected
  | Unrecognized

/**
 * The schema of the whole union (the SDK's own shape, with `_tag`): for arbitraries and for
 * storing events.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionEvent = Schema.Union(
  Started,
  BrowserStarted,
  ActionRun,
  ThoughtsAndMemories,
  Complete,
  AgentError,
  ExternalResourceRequested,
  ExternalResourceGranted,
  Heartbeat,
  Connected,
  Unrecognized
)

// Every known event has a wire name.
const _everyTagNamed: Record<Exclude<Tag, "Unrecognized">, string> = wireNames
void _everyTagNamed

// The schemas by tag, asked for on first use (they are declared above, the union after them).
const schemas = (): Record<Events.KnownTag, Schema.Schema.AnyNoContext> => ({
  Started,
  BrowserStarted,
  ActionRun,
  ThoughtsAndMemories,
  Complete,
  AgentError,
  ExternalResourceRequested,
  ExternalResourceGranted,
  Heartbeat,
  Connected
})

/**
 * The result of decoding one payload: the event, or the reason it did not decode.
 *
 * @since 0.1.0
 * @category models
 */
export type PayloadResult = Either.Either<SessionEvent, string>

// Payloads by wire name and back (`Events.codecs`: the `_tag` is the SDK's, not the wire's).
const codecs = Events.codecs<SessionEvent, PayloadResult>({
  decoder: (tag) => {
    const decode = Schema.decodeUnknownEither(schemas()[tag], { onExcessProperty: "ignore" })
    return (input) => {
      const result = decode(input)
      return Either.isRight(result) ? Either.right(result.right as SessionEvent) : Either.left(formatIssues(result.left))
    }
  },
  encoder: (tag) => Schema.encodeSync(schemas()[tag])
})

/**
 * Decodes the payload of a known wire event, synchronously. An unknown name gives `None`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodePayload = (name: string, payload: unknown): Option.Option<PayloadResult> =>
  Option.fromNullable(codecs.decode(name, payload))

/**
 * Encodes an event to its wire name and payload (the simulator sends with this).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toWire: (event: SessionEvent) => { readonly event: string; readonly payload: unknown } = codecs.toWire

/**
 * Parses the `response` of a `complete` event as JSON; any `type` may be parsed, a
 * response that is not JSON fails with `ResponseParseError`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const parseJsonResponse = (event: Complete): Either.Either<unknown, ResponseParseError> => {
  const parsed = Events.parseResponse(event.response)
  return parsed._tag === "Parsed"
    ? Either.right(parsed.value)
    : Either.left(new ResponseParseError({ raw: truncateRaw(event.response), message: parsed.message }))
}
