/**
 * The service's data model as plain values and rules: the agent domains and session statuses the
 * document names, what a caller's request must be before anything is sent (an absolute
 * http(s) `start_url`, `max_actions` an integer >= 1, text that is not blank), how a timestamp the
 * service sent is read, and the observed dialect's bodies (its create-session body and its
 * `{ data: { sessionId } }` envelope) against the documented ones. Each edition declares its
 * `Schema`s over these values, checks and texts.
 *
 * @since 0.1.0
 */

/**
 * The purposes of an agent: the five values the document names.
 *
 * @since 0.1.0
 * @category models
 */
export const agentDomains = ["sales", "marketing", "research", "automation", "podcasting"] as const

/**
 * The session statuses the document names (any other is kept as `Unrecognized`; no
 * transitions between them are assumed).
 *
 * @since 0.1.0
 * @category models
 */
export const sessionStatuses = ["started", "in_progress", "complete"] as const

// ---------------------------------------------------------------------------
// A caller's request
// ---------------------------------------------------------------------------

/**
 * Whether text has at least one character that is not white space (`goal`, an agent's `name` and
 * `website`, a session id).
 *
 * @since 0.1.0
 * @category guards
 */
export const isNonBlank = (text: string): boolean => text.trim().length > 0

/**
 * Why blank text is refused.
 *
 * @since 0.1.0
 * @category models
 */
export const nonBlankMessage = "must not be empty or blank"

/**
 * Whether text is an absolute `http:` or `https:` URL with a host (`start_url`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isHttpUrl = (text: string): boolean => {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return (url.protocol === "http:" || url.protocol === "https:") && url.host.length > 0
}

/**
 * Why a `start_url` that is not an absolute http(s) URL is refused.
 *
 * @since 0.1.0
 * @category models
 */
export const httpUrlMessage = "must be an absolute http(s) URL"

/**
 * The least `max_actions` a session may be created with: 1 (an integer).
 *
 * @since 0.1.0
 * @category models
 */
export const minMaxActions = 1

/**
 * Why a `max_actions` below {@link minMaxActions} is refused.
 *
 * @since 0.1.0
 * @category models
 */
export const maxActionsMessage = "must be an integer >= 1"

// ---------------------------------------------------------------------------
// Timestamps
// ---------------------------------------------------------------------------

const NUMERIC = /^-?\d+(\.\d+)?$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/

/**
 * Below this an epoch number is read as seconds (up to the year 5138), from it as milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export const secondsBelow = 1e11

/**
 * How to read a timestamp the service sent, as a number or a numeric string kept as text: a
 * number (epoch seconds or milliseconds, by {@link secondsBelow}) as epoch milliseconds; an
 * ISO-8601-looking date (`YYYY-MM-DD...`) as its trimmed text, for the edition's date parser;
 * anything else `undefined` (never a failure: the raw value stays on the session).
 *
 * @since 0.1.0
 * @category constructors
 */
export const readTimestamp = (raw: string): number | string | undefined => {
  const trimmed = raw.trim()
  if (trimmed.length === 0) return undefined
  if (NUMERIC.test(trimmed)) {
    const n = Number(trimmed)
    return Math.abs(n) < secondsBelow ? n * 1000 : n
  }
  // Date.parse accepts many shapes that are not ISO dates: only an ISO-looking date is handed on.
  return ISO_DATE.test(trimmed) ? trimmed : undefined
}

// ---------------------------------------------------------------------------
// The observed dialect's bodies
// ---------------------------------------------------------------------------

/**
 * The defaults the observed dialect's server applies when its create-session body leaves `url` or
 * `max_actions` out (that dialect's own client sends neither by default).
 *
 * @since 0.1.0
 * @category models
 */
export const observedDefaults = {
  startUrl: "https://example.com/",
  maxActions: 20
} as const

/**
 * A create-session request as the documented body carries it; `T` is the edition's schedule
 * (`auto_trigger`).
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateSessionFields<T> {
  readonly start_url: string
  readonly max_actions: number
  readonly goal: string
  readonly auto_trigger?: T
}

/**
 * The observed dialect's create-session body: `goal`, and optionally `url` (the start page),
 * `max_actions` and `auto_trigger`; `null` is absent, as that dialect's own client sends it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObservedCreateBody<T> {
  readonly goal: string
  readonly url?: string | null | undefined
  readonly max_actions?: number | null | undefined
  readonly auto_trigger?: T | null | undefined
}

/**
 * The request an observed create-session body asks for: what it leaves out (or sends as `null`)
 * is {@link observedDefaults}; a `null` schedule is none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromObservedCreateBody = <T>(body: ObservedCreateBody<T>): CreateSessionFields<T> => ({
  goal: body.goal,
  start_url: body.url ?? observedDefaults.startUrl,
  max_actions: body.max_actions ?? observedDefaults.maxActions,
  ...(body.auto_trigger === undefined || body.auto_trigger === null ? {} : { auto_trigger: body.auto_trigger })
})

/**
 * A request as the observed dialect's create-session body: `start_url` sent as `url`, and
 * `max_actions` sent as well (that server may use it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toObservedCreateBody = <T>(request: CreateSessionFields<T>): {
  readonly goal: string
  readonly url: string
  readonly max_actions: number
  readonly auto_trigger?: T
} => ({
  goal: request.goal,
  url: request.start_url,
  max_actions: request.max_actions,
  ...(request.auto_trigger === undefined ? {} : { auto_trigger: request.auto_trigger })
})

/**
 * The fields of a session the service describes besides its id, as sent: `S` is the status as
 * sent (a string).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionDetails<S> {
  readonly status?: S
  readonly start_time?: string | number
  readonly end_time?: string | number
  readonly error?: string
}

/**
 * A session as the documented (flat) response describes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface FlatSession<S> extends SessionDetails<S> {
  readonly session_id: string
}

/**
 * A session as the observed dialect's response describes it: `{ data: { sessionId, ... } }`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObservedSession<S> {
  readonly data: SessionDetails<S> & { readonly sessionId: string }
}

/** The same fields, any of them possibly given as `undefined` (absent). */
type Loose<T> = { readonly [K in keyof T]?: T[K] | undefined }

/** The details that are present, each as sent. */
const detailsOf = <S>(from: Loose<SessionDetails<S>>): SessionDetails<S> => ({
  ...(from.status === undefined ? {} : { status: from.status }),
  ...(from.start_time === undefined ? {} : { start_time: from.start_time }),
  ...(from.end_time === undefined ? {} : { end_time: from.end_time }),
  ...(from.error === undefined ? {} : { error: from.error })
})

/**
 * The flat session of an observed envelope: `sessionId` as `session_id`, the other fields as sent
 * (those absent stay absent).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromObservedSession = <S>(
  { data }: { readonly data: Loose<SessionDetails<S>> & { readonly sessionId: string } }
): FlatSession<S> => ({
  session_id: data.sessionId,
  ...detailsOf(data)
})

/**
 * A flat session in the observed envelope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toObservedSession = <S>(
  session: Loose<SessionDetails<S>> & { readonly session_id: string }
): ObservedSession<S> => ({
  data: { sessionId: session.session_id, ...detailsOf(session) }
})
