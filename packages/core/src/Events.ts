/**
 * The events of a session's event channel as the service names them: the wire name of each event
 * the SDK knows, by the SDK's tag; the known values of the open enumerations (`complete`'s `type`,
 * a request's `resource_type`); what a cost is and where a `complete` event carries it;
 * how a `complete` response is read as JSON. Each edition declares its `Schema`s over
 * these values and texts, so both decode and report alike.
 *
 * @since 0.1.0
 */

/**
 * The wire name of each event the SDK knows, by the SDK's tag.
 *
 * @since 0.1.0
 * @category models
 */
export const wireNames = {
  Started: "started",
  BrowserStarted: "browser_started",
  ActionRun: "action_run",
  ThoughtsAndMemories: "thoughts_and_memories",
  Complete: "complete",
  AgentError: "error",
  ExternalResourceRequested: "external_resource_requested",
  ExternalResourceGranted: "external_resource_granted",
  Heartbeat: "heartbeat",
  Connected: "connected"
} as const

/**
 * The SDK tag of a known event (every tag but `Unrecognized`).
 *
 * @since 0.1.0
 * @category models
 */
export type KnownTag = keyof typeof wireNames

/**
 * A known wire event name.
 *
 * @since 0.1.0
 * @category models
 */
export type WireName = (typeof wireNames)[KnownTag]

const known: ReadonlySet<string> = new Set(Object.values(wireNames))

/**
 * Whether a wire name is one the SDK knows.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWireName = (name: string): name is WireName => known.has(name)

/**
 * What an `Unrecognized` event's name must not be: a known name (its own event decodes it).
 *
 * @since 0.1.0
 * @category models
 */
export const unrecognizedNameMessage = "a known event"

/**
 * The kinds of a `complete` response the document names; any other is kept as
 * `Unrecognized`.
 *
 * @since 0.1.0
 * @category models
 */
export const responseTypes = ["STRING", "JSON", "MARKDOWN"] as const

/**
 * The kinds of an external resource request the document names; any other is kept as
 * `Unrecognized`, and can be answered all the same.
 *
 * @since 0.1.0
 * @category models
 */
export const resourceTypes = ["request_user_input", "admin_permission_request"] as const

/**
 * The wire string of a value of an open enumeration (`responseTypes`, `resourceTypes`): a known
 * value is its own string, any other is kept as `{ _tag: "Unrecognized", raw }`.
 *
 * @example
 * ```ts
 * import { Events } from "effect-agent-session-core"
 *
 * Events.rawOf("JSON") // "JSON"
 * const unrecognized = { _tag: "Unrecognized", raw: "XML" } as const
 * Events.rawOf(unrecognized) // "XML"
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const rawOf = (value: string | { readonly raw: string }): string => typeof value === "string" ? value : value.raw

// ---------------------------------------------------------------------------
// Cost
// ---------------------------------------------------------------------------

/**
 * Why a `total_cost` is refused: it must be a finite number, and not negative. No unit is assumed.
 *
 * @since 0.1.0
 * @category models
 */
export const costMessages = {
  notFinite: "total_cost must be a finite number",
  negative: "total_cost must not be negative"
} as const

/**
 * Whether a number is a cost: finite and not negative.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCost = (value: number): boolean => Number.isFinite(value) && value >= 0

/**
 * Why a `complete` event is refused when it carries no cost: the observed dialect's
 * `cost_summary` may stand in for `total_cost`, nothing else may.
 *
 * @since 0.1.0
 * @category models
 */
export const missingCostMessage = "complete needs total_cost or cost_summary"

/**
 * The session's cost from a `complete` event: its `total_cost`, else a numeric `total_cost`
 * or `total` inside the observed dialect's `cost_summary` that is a cost; `undefined` when neither.
 *
 * @since 0.1.0
 * @category accessors
 */
export const totalCost = (
  totalCost: number | undefined,
  costSummary: { readonly [key: string]: unknown } | undefined
): number | undefined => {
  if (totalCost !== undefined) return totalCost
  if (costSummary === undefined) return undefined
  const value = costSummary["total_cost"] ?? costSummary["total"]
  return typeof value === "number" && isCost(value) ? value : undefined
}

// ---------------------------------------------------------------------------
// The response of `complete`
// ---------------------------------------------------------------------------

/**
 * A `complete` response read as JSON: the value, or why it is not JSON.
 *
 * @since 0.1.0
 * @category models
 */
export type ParsedResponse =
  | { readonly _tag: "Parsed"; readonly value: unknown }
  | { readonly _tag: "NotJson"; readonly message: string }

/**
 * Reads a `complete` response as JSON, whatever its `type` says: the value, or the parser's
 * message (`"not JSON"` when it gives none). Never throws.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseResponse = (response: string): ParsedResponse => {
  try {
    return { _tag: "Parsed", value: JSON.parse(response) as unknown }
  } catch (e) {
    return { _tag: "NotJson", message: e instanceof Error ? e.message : "not JSON" }
  }
}

// ---------------------------------------------------------------------------
// Payloads to events and back
// ---------------------------------------------------------------------------

/**
 * An event the SDK does not know, as each edition keeps it: its wire name and its payload as sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface UnrecognizedEvent {
  readonly _tag: "Unrecognized"
  readonly event: string
  readonly payload: unknown
}

/**
 * The payload of a known event and its wire name, both ways, over an edition's schemas. On the wire
 * a payload carries no `_tag`: the SDK's tag is added to an object payload before it is decoded
 * (any other payload is decoded as it is, and refused by the schema) and taken off what is
 * encoded. An unknown event goes out under its own name with its payload as sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Codecs<E, R> {
  /** Decodes the payload of a known wire name; `undefined` for a name the SDK does not know. */
  readonly decode: (name: string, payload: unknown) => R | undefined
  /** An event's wire name and payload. */
  readonly toWire: (event: E) => { readonly event: string; readonly payload: unknown }
}

/**
 * The {@link Codecs} of an edition: `decoder` decodes a tagged payload of one known tag (the
 * event, or why not, as `R`), `encoder` encodes an event of one known tag (with its `_tag`). Each
 * is asked for once per tag, on first use, so the edition's schemas may be declared after this.
 *
 * @since 0.1.0
 * @category constructors
 */
export const codecs = <E extends { readonly _tag: string }, R>(make: {
  readonly decoder: (tag: KnownTag) => (input: unknown) => R
  readonly encoder: (tag: KnownTag) => (event: E) => unknown
}): Codecs<E, R> => {
  const byName = new Map<string, KnownTag>()
  for (const tag of Object.keys(wireNames) as Array<KnownTag>) byName.set(wireNames[tag], tag)
  const decoders = new Map<KnownTag, (input: unknown) => R>()
  const encoders = new Map<KnownTag, (event: E) => unknown>()
  const isUnrecognized = (event: E | UnrecognizedEvent): event is UnrecognizedEvent => event._tag === "Unrecognized"
  return {
    decode: (name, payload) => {
      const tag = byName.get(name)
      if (tag === undefined) return undefined
      let decoder = decoders.get(tag)
      if (decoder === undefined) decoders.set(tag, decoder = make.decoder(tag))
      const isObject = typeof payload === "object" && payload !== null && !Array.isArray(payload)
      return decoder(isObject ? { ...payload, _tag: tag } : payload)
    },
    toWire: (event) => {
      if (isUnrecognized(event)) return { event: event.event, payload: event.payload }
      const tag = event._tag as KnownTag
      let encoder = encoders.get(tag)
      if (encoder === undefined) encoders.set(tag, encoder = make.encoder(tag))
      const { _tag, ...payload } = encoder(event) as { readonly _tag: string }
      return { event: wireNames[tag], payload }
    }
  }
}
