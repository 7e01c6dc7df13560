/**
 * The events of a session's event channel: the members of the tagged union whose schemas read
 * the same on both lines, the wire names, matching, the guards and the accessors.
 *
 * The declarations of the public module `SessionEvent` written once for both editions: each
 * edition's `src/SessionEvent.ts` is its entry point, re-exports them, and adds what each line
 * writes its own way: `Cost`, `Complete` and `Unrecognized` (their checks), the union, the
 * payload codecs and the accessors that give the edition's own success-or-failure value.
 *
 * @since 0.1.0
 */
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Events } from "effect-agent-session-core"
import { optionFromNullable, optionFromOptionalNullable } from "../src/internal/line.js"
import { openEnum } from "../src/internal/schema.js"
import { ActionSessionId, SessionId } from "../src/Session.js"
import type { Complete, SessionEvent } from "../src/SessionEvent.js"

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
 * The wire name of each known event, by tag.
 *
 * @since 0.1.0
 * @category models
 */
export const wireNames: typeof Events.wireNames = Events.wireNames

/** An optional string: absent or `null` on the wire is `None`, and `None` is left out when encoding. */
const optionalString = optionFromOptionalNullable(Schema.String)

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
 * The SDK tag of every event.
 *
 * @since 0.1.0
 * @category models
 */
export type Tag = SessionEvent["_tag"]

/**
 * A known wire event name.
 *
 * @since 0.1.0
 * @category models
 */
export type WireName = Events.WireName

/**
 * Whether a wire name is one the SDK knows.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWireName: (name: string) => name is WireName = Events.isWireName

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
 * The session's cost from a `complete` event: `total_cost`, else a numeric `total_cost` or
 * `total` inside the observed `cost_summary`; `None` when neither is there.
 *
 * @since 0.1.0
 * @category accessors
 */
export const totalCost = (event: Complete): Option.Option<number> =>
  optionFromNullable(Events.totalCost(Option.getOrUndefined(event.total_cost), Option.getOrUndefined(event.cost_summary)))
