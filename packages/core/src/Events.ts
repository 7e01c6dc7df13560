/**
 * The events of a session's event channel as the service names them: the wire name of each event
 * the SDK knows, by the SDK's tag; the known values of the open enumerations (`complete`'s `type`,
 * U13; a request's `resource_type`, U15); what a cost is and where a `complete` event carries it
 * (U14); how a `complete` response is read as JSON (U13). Each edition declares its `Schema`s over
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
 * The kinds of a `complete` response the document names (U13); any other is kept as
 * `Unrecognized`.
 *
 * @since 0.1.0
 * @category models
 */
export const responseTypes = ["STRING", "JSON", "MARKDOWN"] as const

/**
 * The kinds of an external resource request the document names (U15); any other is kept as
 * `Unrecognized`, and can be answered all the same.
 *
 * @since 0.1.0
 * @category models
 */
export const resourceTypes = ["request_user_input", "admin_permission_request"] as const

// ---------------------------------------------------------------------------
// Cost (U14)
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
 * Whether a number is a cost: finite and not negative (U14).
 *
 * @since 0.1.0
 * @category guards
 */
export const isCost = (value: number): boolean => Number.isFinite(value) && value >= 0

/**
 * Why a `complete` event is refused when it carries no cost: the observed dialect's
 * `cost_summary` may stand in for `total_cost`, nothing else may (U14).
 *
 * @since 0.1.0
 * @category models
 */
export const missingCostMessage = "complete needs total_cost or cost_summary"

/**
 * The session's cost from a `complete` event (U14): its `total_cost`, else a numeric `total_cost`
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
// The response of `complete` (U13)
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
 * Reads a `complete` response as JSON, whatever its `type` says (U13): the value, or the parser's
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
