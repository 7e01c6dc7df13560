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
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ResponseParseError, truncateRaw } from "./Errors.js"
import { formatIssues, openEnum } from "./internal/schema.js"
import { ActionSessionId, SessionId } from "./Session.js"
import { Events } from "effect-agent-session-core"

/**
 * The kind of a `complete` response: `STRING`, `JSON`, `MARKDOWN`, or `Unrecognized`.
 *
 * @since 0.1.0
 * @category models
 */
export const ResponseType = openEnum(...Events.responseTypes)

/**
 * @since 0.1.0
 * @category models
 */
export type ResponseType = typeof ResponseType.Type

/**
 * The kind of an external resource request: `request_user_input`, `admin_permission_request`,
 * or `Unrecognized`; all can be answered.
 *
 * @since 0.1.0
 * @category models
 */
export const ResourceType = openEnum(...Events.resourceTypes)

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceType = typeof ResourceType.Type

/**
 * The wire string of a {@link ResourceType}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resourceTypeRaw: (type: ResourceType) => string = Events.rawOf

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

/** An optional string: absent or `null` on the wire is `None`, and `None` is left out when encoding. */
const optionalString = Schema.optionalWith(Schema.String, { as: "Option", exact: true, nullable: true })

/**
 * The wire name of each known event, by tag.
 *
 * @since 0.1.0
 * @category models
 */
export const wireNames: typeof Events.wireNames = Events.wireNames


/**
 * `started`: the session is connected with the agent.
 *
 * @since 0.1.0
 * @category models
 */
export const Started = Schema.TaggedStruct("Started", {
  sessionId: SessionId,
  start_url: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Started extends Schema.Schema.Type<typeof Started> {}

/**
 * `browser_started`: the agent is connected to a browser.
 *
 * @since 0.1.0
 * @category models
 */
export const BrowserStarted = Schema.TaggedStruct("BrowserStarted", {
  url: Schema.String,
  action_session_id: ActionSessionId
})

/**
 * @since 0.1.0
 * @category models
 */
export interface BrowserStarted extends Schema.Schema.Type<typeof BrowserStarted> {}

/**
 * `action_run`: an action is about to run. Chargeable: counted against `max_actions`.
 *
 * @since 0.1.0
 * @category models
 */
export const ActionRun = Schema.TaggedStruct("ActionRun", {
  name: Schema.String,
  action_session_id: ActionSessionId,
  content: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ActionRun extends Schema.Schema.Type<typeof ActionRun> {}

/**
 * `thoughts_and_memories`: insight into the agent's thinking.
 *
 * @since 0.1.0
 * @category models
 */
export const ThoughtsAndMemories = Schema.TaggedStruct("ThoughtsAndMemories", {
  thought: Schema.String,
  memory: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ThoughtsAndMemories extends Schema.Schema.Type<typeof ThoughtsAndMemories> {}

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
 * `error`: an error during the session. Delivered as an event; it ends the stream only with the
 * `endOnError` option.
 *
 * @since 0.1.0
 * @category models
 */
export const AgentError = Schema.TaggedStruct("AgentError", {
  error: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AgentError extends Schema.Schema.Type<typeof AgentError> {}

/**
 * `external_resource_requested`: the agent needs input or approval. Answer it with
 * `respond(request, Answer.grant(input) | Answer.deny())`. `field_name` applies only where a
 * field is relevant.
 *
 * @since 0.1.0
 * @category models
 */
export const ExternalResourceRequested = Schema.TaggedStruct("ExternalResourceRequested", {
  resource_type: ResourceType,
  reason: Schema.String,
  action_session_id: ActionSessionId,
  field_name: optionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ExternalResourceRequested extends Schema.Schema.Type<typeof ExternalResourceRequested> {}

/**
 * `external_resource_granted`: a request was granted (`granted: true`, with `input` where given)
 * or denied.
 *
 * @since 0.1.0
 * @category models
 */
export const ExternalResourceGranted = Schema.TaggedStruct("ExternalResourceGranted", {
  granted: Schema.Boolean,
  input: optionalString
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ExternalResourceGranted extends Schema.Schema.Type<typeof ExternalResourceGranted> {}

/**
 * `heartbeat` (observed dialect): connection health. It carries nothing the SDK reads.
 *
 * @since 0.1.0
 * @category models
 */
export const Heartbeat = Schema.TaggedStruct("Heartbeat", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Heartbeat extends Schema.Schema.Type<typeof Heartbeat> {}

/**
 * `connected` (observed dialect): the connection is established.
 *
 * @since 0.1.0
 * @category models
 */
export const Connected = Schema.TaggedStruct("Connected", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Connected extends Schema.Schema.Type<typeof Connected> {}

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

/**
 * The SDK tag of every event.
 *
 * @since 0.1.0
 * @category models
 */
export type Tag = SessionEvent["_tag"]

// Every known event has a wire name.
const _everyTagNamed: Record<Exclude<Tag, "Unrecognized">, string> = wireNames
void _everyTagNamed

/**
 * A known wire event name.
 *
 * @since 0.1.0
 * @category models
 */
export type WireName = Events.WireName

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
 * Whether a wire name is one the SDK knows.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWireName: (name: string) => name is WireName = Events.isWireName

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
 * Exhaustive matching on the event's tag.
 *
 * @example
 * ```ts
 * import { SessionEvent } from "effect-agent-session"
 *
 * const describe = SessionEvent.$match({
 *   Started: (e) => `started at ${e.start_url}`,
 *   BrowserStarted: (e) => `browser on ${e.url}`,
 *   ActionRun: (e) => `action ${e.name}`,
 *   ThoughtsAndMemories: (e) => e.thought,
 *   Complete: (e) => e.response,
 *   AgentError: (e) => e.error,
 *   ExternalResourceRequested: (e) => e.reason,
 *   ExternalResourceGranted: (e) => (e.granted ? "granted" : "denied"),
 *   Heartbeat: () => "heartbeat",
 *   Connected: () => "connected",
 *   Unrecognized: (e) => e.event
 * })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const $match = Match.typeTags<SessionEvent>()

/**
 * A guard for one tag: `events.pipe(Stream.filter(SessionEvent.$is("ActionRun")))`.
 *
 * @since 0.1.0
 * @category guards
 */
export const $is = <T extends Tag>(tag: T) => (event: SessionEvent): event is Extract<SessionEvent, { _tag: T }> =>
  event._tag === tag

/**
 * Whether an event ends the session: `complete`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (event: SessionEvent): event is Complete => event._tag === "Complete"

/**
 * Whether an event is chargeable: `action_run`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isChargeable = (event: SessionEvent): event is ActionRun => event._tag === "ActionRun"

/**
 * The wire string of a {@link ResponseType}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const responseTypeRaw: (type: ResponseType) => string = Events.rawOf

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

/**
 * The session's cost from a `complete` event: `total_cost`, else a numeric `total_cost` or
 * `total` inside the observed `cost_summary`; `None` when neither is there.
 *
 * @since 0.1.0
 * @category accessors
 */
export const totalCost = (event: Complete): Option.Option<number> =>
  Option.fromNullable(Events.totalCost(Option.getOrUndefined(event.total_cost), Option.getOrUndefined(event.cost_summary)))
