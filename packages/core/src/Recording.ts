/**
 * The recording format (issue 23), written once for both editions: what a line of a recorded
 * session is, how one is parsed and validated, how secrets are kept out of it, how two answers
 * differ, how frames cross transports, how a recorded connection's end is served again, and a
 * {@link Reader} that reads a recording line by line with bounded memory. No I/O of its own: the
 * reader reads through the synchronous file functions it is given (`node:fs` has them). The
 * editions' shells (`Recording`, the test kit's replay, the simulator's `Replay`) do the rest.
 *
 * A recording is JSON Lines: one header line, then one line per thing that happened, in the order
 * it happened. The `effect-agent-session` package's docs/testing.md documents every line;
 * {@link Line} is the same in types.
 *
 * @since 0.1.0
 */
import type * as Dialect from "./Dialect.js"
import type * as Frame from "./Frame.js"
import type { CloseReason } from "./internal/connection.js"
import { redactSecrets } from "./Secrets.js"

/**
 * The `format` of the header line.
 *
 * @since 0.1.0
 * @category models
 */
export const FORMAT = "effect-agent-session/recording"

/**
 * The version this SDK writes, and the newest it reads.
 *
 * @since 0.1.0
 * @category models
 */
export const VERSION = 1

/**
 * The event channel's transport a session was recorded over.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = "websocket" | "sse"

/**
 * An error as an edition's `Errors.AgentSessionError` encodes it (decoded by the shells).
 *
 * @since 0.1.0
 * @category models
 */
export interface EncodedError {
  readonly _tag: string
  readonly [field: string]: unknown
}

/**
 * A JSON object (a create request, a session as the SDK encodes it).
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [field: string]: unknown }

/**
 * The first line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Header {
  readonly type: "header"
  readonly format: typeof FORMAT
  readonly version: number
  /** The SDK version that wrote it. */
  readonly sdk: string
  /** Every choice of the dialect the session spoke. */
  readonly dialect: Dialect.Dialect
  readonly transport: Transport
  /** The recorded session. */
  readonly sessionId: string
  /** When the recording started (ISO 8601). */
  readonly recordedAt: string
}

/**
 * How one connection (attempt) ended, as the SDK's engine saw it.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  /** It ended for good, normally (`complete`, `closed-by-service`, `error-event`). */
  | { readonly _tag: "End"; readonly reason: string }
  /** It ended for good with an error (a refused handshake, a frame error). */
  | { readonly _tag: "Fatal"; readonly reason: string; readonly error: EncodedError }
  /** It dropped: `cause` describes how (`closed with code 1006`), or `error` is a typed error (`ConnectTimeout`). */
  | { readonly _tag: "Retry"; readonly cause?: string; readonly error?: EncodedError }
  /** The application closed it (`close`, or the connection's scope closed). */
  | { readonly _tag: "Interrupted" }
  /** The transport died (a bug). */
  | { readonly _tag: "Defect"; readonly message: string }

/**
 * An answer as it went on the wire (the core's `Frame.AnswerData`).
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerData = Frame.AnswerData

/**
 * What became of an answer written.
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerResult = "written" | "confirmed" | { readonly failed: string; readonly retry: boolean }

/**
 * Every line but the header. `t` is milliseconds since the recording started; `conn` counts connections from 1.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry =
  | { readonly type: "create"; readonly t: number; readonly request: JsonObject }
  | { readonly type: "created"; readonly t: number; readonly session: JsonObject }
  | { readonly type: "create-failed"; readonly t: number; readonly error: EncodedError }
  | { readonly type: "connect"; readonly t: number; readonly conn: number }
  | { readonly type: "open"; readonly t: number; readonly conn: number }
  | FrameEntry
  | { readonly type: "too-large"; readonly t: number; readonly conn: number; readonly size: number }
  | { readonly type: "alive"; readonly t: number; readonly conn: number }
  | AnswerEntry
  | CloseEntry
  | EndEntry

/**
 * A frame received: WebSocket text, WebSocket binary (base64), or a Server-Sent Event.
 *
 * @since 0.1.0
 * @category models
 */
export type FrameEntry =
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly text: string }
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly base64: string }
  | { readonly type: "frame"; readonly t: number; readonly conn: number; readonly event: string; readonly data: string }

/**
 * An answer written.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerEntry {
  readonly type: "answer"
  readonly t: number
  readonly conn: number
  readonly data: AnswerData
  readonly result: AnswerResult
}

/**
 * A connection ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseEntry {
  readonly type: "close"
  readonly t: number
  readonly conn: number
  /** Whether it had opened. */
  readonly opened: boolean
  readonly outcome: Outcome
}

/**
 * The event channel closed for good: the session's end, as `EventStream.ConnectionState.Closed` said.
 *
 * @since 0.1.0
 * @category models
 */
export interface EndEntry {
  readonly type: "end"
  readonly t: number
  readonly reason: string
  /** The error the events failed with, if any. */
  readonly error?: EncodedError
  /** Answers accepted but not delivered when it closed. */
  readonly unsent?: ReadonlyArray<{ readonly resourceType: string; readonly actionSessionId: string }>
}

/**
 * Any line.
 *
 * @since 0.1.0
 * @category models
 */
export type Line = Header | Entry

/**
 * A parse: the value, or why not.
 *
 * @since 0.1.0
 * @category models
 */
export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly reason: string }

const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const no = (reason: string): Parsed<never> => ({ ok: false, reason })

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

type Obj = { readonly [field: string]: unknown }

const isObject = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)
const isString = (u: unknown): u is string => typeof u === "string"
const isTime = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u) && u >= 0
const isCount = (u: unknown): u is number => typeof u === "number" && Number.isInteger(u) && u >= 1
const isPath = (u: unknown): u is Dialect.Path => isString(u) && u.startsWith("/")
const oneOf = <const L extends ReadonlyArray<string>>(u: unknown, literals: L): u is L[number] =>
  isString(u) && literals.includes(u)

/** The first field of `fields` that does not hold, as a reason. */
const check = (value: Obj, fields: Record<string, (u: unknown) => boolean>): string | undefined => {
  for (const [name, holds] of Object.entries(fields)) {
    if (!holds(value[name])) return `"${name}" is missing or not valid`
  }
  return undefined
}

const parseDialect = (u: unknown): Parsed<Dialect.Dialect> => {
  if (!isObject(u)) return no(`"dialect" is not an object`)
  const sse = u["sse"]
  const wrong = check(u, {
    name: isString,
    auth: (v) => oneOf(v, ["bearer", "x-api-key"]),
    onboardPath: isPath,
    sessionsPath: isPath,
    createSessionBody: (v) => oneOf(v, ["documented", "observed"]),
    sessionResponse: (v) => oneOf(v, ["flat", "data-envelope"]),
    retrieve: (v) => typeof v === "boolean",
    connectPath: isPath,
    handshake: (v) => oneOf(v, ["message", "query", "both"]),
    framing: (v) => oneOf(v, ["event-data", "type-data", "flat"]),
    answerKey: (v) => oneOf(v, ["event", "type"]),
    heartbeats: (v) => typeof v === "boolean",
    costSummary: (v) => typeof v === "boolean",
    // A choice added after version 1 was written: absent means the built-in dialects' value.
    replaysOnReconnect: (v) => v === undefined || typeof v === "boolean",
    sse: (v) => isObject(v) && isPath(v["connectPath"]) && isString(v["egressPath"])
  })
  if (wrong !== undefined || !isObject(sse)) return no(`dialect: ${wrong ?? "sse"}`)
  const d = u as unknown as Dialect.Dialect
  // A fresh value of exactly the known choices.
  return ok({
    name: d.name,
    auth: d.auth,
    onboardPath: d.onboardPath,
    sessionsPath: d.sessionsPath,
    createSessionBody: d.createSessionBody,
    sessionResponse: d.sessionResponse,
    retrieve: d.retrieve,
    connectPath: d.connectPath,
    handshake: d.handshake,
    framing: d.framing,
    answerKey: d.answerKey,
    heartbeats: d.heartbeats,
    costSummary: d.costSummary,
    replaysOnReconnect: d.replaysOnReconnect ?? false,
    sse: { connectPath: d.sse.connectPath, egressPath: d.sse.egressPath }
  })
}

/**
 * Parses the header line: a foreign file or a newer version is refused here.
 *
 * @since 0.1.0
 * @category combinators
 */
export const parseHeader = (text: string): Parsed<Header> => {
  const json = parseJson(text)
  if (!json.ok) return json
  const u = json.value
  if (!isObject(u) || u["type"] !== "header" || u["format"] !== FORMAT) {
    return no(`not a recording of effect-agent-session: the first line is not its header ({"type":"header","format":"${FORMAT}",...})`)
  }
  const version = u["version"]
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) return no(`"version" is not valid`)
  if (version > VERSION) {
    return no(`written in format version ${version}, newer than this SDK reads (${VERSION}): upgrade the SDK`)
  }
  const wrong = check(u, {
    sdk: isString,
    transport: (v) => oneOf(v, ["websocket", "sse"]),
    sessionId: isString,
    recordedAt: isString
  })
  if (wrong !== undefined) return no(`header: ${wrong}`)
  const dialect = parseDialect(u["dialect"])
  if (!dialect.ok) return no(`header: ${dialect.reason}`)
  return ok({
    type: "header",
    format: FORMAT,
    version,
    sdk: u["sdk"] as string,
    dialect: dialect.value,
    transport: u["transport"] as Transport,
    sessionId: u["sessionId"] as string,
    recordedAt: u["recordedAt"] as string
  })
}

const isEncodedError = (u: unknown): u is EncodedError => isObject(u) && isString(u["_tag"])

const isAnswerData = (u: unknown): u is AnswerData =>
  isObject(u) && typeof u["granted"] === "boolean" && isString(u["resource_type"]) &&
  ["action_session_id", "field_name", "input"].every((field) => u[field] === undefined || isString(u[field]))

const isAnswerResult = (u: unknown): u is AnswerResult =>
  u === "written" || u === "confirmed" || (isObject(u) && isString(u["failed"]) && typeof u["retry"] === "boolean")

const isOutcome = (u: unknown): u is Outcome => {
  if (!isObject(u)) return false
  switch (u["_tag"]) {
    case "End":
      return isString(u["reason"])
    case "Fatal":
      return isString(u["reason"]) && isEncodedError(u["error"])
    case "Retry":
      return isString(u["cause"]) !== isEncodedError(u["error"])
    case "Interrupted":
      return true
    case "Defect":
      return isString(u["message"])
    default:
      return false
  }
}

const isUnsent = (u: unknown): boolean =>
  Array.isArray(u) && u.every((item) => isObject(item) && isString(item["resourceType"]) && isString(item["actionSessionId"]))

const entryFields: Record<Entry["type"], Record<string, (u: unknown) => boolean>> = {
  create: { t: isTime, request: isObject },
  created: { t: isTime, session: isObject },
  "create-failed": { t: isTime, error: isEncodedError },
  connect: { t: isTime, conn: isCount },
  open: { t: isTime, conn: isCount },
  frame: { t: isTime, conn: isCount },
  "too-large": { t: isTime, conn: isCount, size: isTime },
  alive: { t: isTime, conn: isCount },
  answer: { t: isTime, conn: isCount, data: isAnswerData, result: isAnswerResult },
  close: { t: isTime, conn: isCount, opened: (v) => typeof v === "boolean", outcome: isOutcome },
  end: {
    t: isTime,
    reason: isString,
    error: (v) => v === undefined || isEncodedError(v),
    unsent: (v) => v === undefined || isUnsent(v)
  }
}

const frameForm = (u: Obj): string | undefined => {
  const forms = [
    isString(u["text"]) ? "text" : undefined,
    isString(u["base64"]) ? "base64" : undefined,
    isString(u["event"]) && isString(u["data"]) ? "event" : undefined
  ].filter((form) => form !== undefined)
  return forms.length === 1 ? undefined : `a frame has exactly one of "text", "base64" or "event" with "data"`
}

const parseJson = (text: string): Parsed<unknown> => {
  try {
    return ok(JSON.parse(text))
  } catch {
    return no("not JSON")
  }
}

/**
 * Parses a line after the header. Unknown `type`s are refused: the file is not of this version.
 *
 * @since 0.1.0
 * @category combinators
 */
export const parseEntry = (text: string): Parsed<Entry> => {
  const json = parseJson(text)
  if (!json.ok) return json
  const u = json.value
  if (!isObject(u)) return no("not a JSON object")
  const type = u["type"]
  if (type === "header") return no("a second header")
  if (!isString(type) || !(type in entryFields)) return no(`unknown line type ${JSON.stringify(type) ?? "(none)"}`)
  const wrong = check(u, entryFields[type as Entry["type"]]) ?? (type === "frame" ? frameForm(u) : undefined)
  if (wrong !== undefined) return no(`${type}: ${wrong}`)
  return ok(u as unknown as Entry)
}

/**
 * The line of a value (no newline).
 *
 * @since 0.1.0
 * @category combinators
 */
export const encodeLine = (line: Line): string => JSON.stringify(line)

// ---------------------------------------------------------------------------
// Lines
// ---------------------------------------------------------------------------

/**
 * Cuts text into lines (`\n` or `\r\n`) as it arrives, holding at most one unfinished line of
 * at most `maxLineLength` characters: a longer line is refused, never held.
 *
 * @since 0.1.0
 * @category models
 */
export class LineSplitter {
  private partial = ""
  /** The most characters held at once. */
  peak = 0

  constructor(readonly maxLineLength: number) {}

  /**
   * The complete lines in `text` (with what was held); `tooLong` when a line is over the limit:
   * the lines before it are given, nothing after it is kept.
   */
  push(text: string): { readonly lines: Array<string>; readonly tooLong: boolean } {
    const lines: Array<string> = []
    let start = 0
    let input = text
    let at = input.indexOf("\n")
    if (at >= 0 && this.partial.length > 0) {
      input = this.partial + input
      at += this.partial.length
      this.partial = ""
    }
    while (at >= 0) {
      const end = at > start && input.charCodeAt(at - 1) === 13 ? at - 1 : at
      if (end - start > this.maxLineLength) return this.refuse(lines)
      lines.push(input.slice(start, end))
      start = at + 1
      at = input.indexOf("\n", start)
    }
    this.partial += input.slice(start)
    this.peak = Math.max(this.peak, this.partial.length)
    if (this.partial.length > this.maxLineLength + 1) return this.refuse(lines)
    return { lines, tooLong: false }
  }

  private refuse(lines: Array<string>): { readonly lines: Array<string>; readonly tooLong: boolean } {
    this.partial = ""
    return { lines, tooLong: true }
  }

  /** The last line, when the text did not end with a newline. */
  end(): string | undefined {
    const rest = this.partial.endsWith("\r") ? this.partial.slice(0, -1) : this.partial
    this.partial = ""
    return rest.length > 0 ? rest : undefined
  }
}

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------

/** A JSON member whose name says it holds a key (`apiKey`, `api_key`, `x-api-key`, `Authorization`), with its value. */
const secretMember =
  /("(?:x[-_]?)?api[-_]?key"|"(?:proxy-)?authorization")(\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[^,}\]\s]*|true|false|null)/gi

/** Whether text may hold a key-named member. */
const mentionsKey = /api[-_]?key|authorization/i

/** A key-bearing query parameter of an address. */
const secretParameter = /([?&](?:apiKey|api_key|apikey|key|token|access_token)=)[^&#"\s]*/gi

/** A bearer credential in text. */
const bearer = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g

/**
 * What replaces a secret.
 *
 * @since 0.1.0
 * @category models
 */
export const REDACTED = "<redacted>"

/**
 * Text with every known secret, every key-named JSON member's value, every key-bearing query
 * parameter and every bearer credential replaced by `<redacted>`. Text without any of them is
 * returned as it is (a frame stays byte for byte what the service sent).
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = redactSecrets(text, secrets)
  // Each replacement only where its cheap sign is present (most frames have none).
  if (mentionsKey.test(out)) out = out.replace(secretMember, `$1$2"${REDACTED}"`)
  if (out.includes("=")) out = out.replace(secretParameter, `$1${REDACTED}`)
  if (out.includes("Bearer")) out = out.replace(bearer, `$1${REDACTED}`)
  return out
}

/**
 * A value with every string scrubbed ({@link scrub}) and every key-named member redacted.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubValue = (value: unknown, secrets: ReadonlyArray<string>, depth = 0): unknown => {
  if (typeof value === "string") return scrub(value, secrets)
  if (depth > 64 || typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    out[name] = /^(?:x[-_]?)?api[-_]?key$|^(?:proxy-)?authorization$/i.test(name)
      ? REDACTED
      : scrubValue(member, secrets, depth + 1)
  }
  return out
}

/**
 * A line with no secret in it: the text of frames scrubbed as text, every other value member by member.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubEntry = (entry: Entry, secrets: ReadonlyArray<string>): Entry => {
  if (entry.type === "frame") {
    if ("text" in entry) return { ...entry, text: scrub(entry.text, secrets) }
    if ("event" in entry) return { ...entry, event: scrub(entry.event, secrets), data: scrub(entry.data, secrets) }
    return entry
  }
  return scrubValue(entry, secrets) as Entry
}

// ---------------------------------------------------------------------------
// Differences
// ---------------------------------------------------------------------------

const show = (value: unknown): string => value === undefined ? "(absent)" : JSON.stringify(value)

/**
 * The differences between two JSON values, one per line (`field: expected X, got Y`), or the
 * empty string when they are equal. Objects are compared member by member (in name order).
 *
 * @since 0.1.0
 * @category combinators
 */
export const difference = (expected: unknown, actual: unknown, path = "", depth = 0): string => {
  if (isObject(expected) && isObject(actual) && depth < 16) {
    const names = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()
    return names
      .map((name) => difference(expected[name], actual[name], path.length === 0 ? name : `${path}.${name}`, depth + 1))
      .filter((line) => line.length > 0)
      .join("\n")
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return ""
  return `${path.length === 0 ? "" : `${path}: `}expected ${show(expected)}, got ${show(actual)}`
}

// ---------------------------------------------------------------------------
// Frames across transports
// ---------------------------------------------------------------------------

/**
 * The event name and payload text of a WebSocket frame in a framing, if it has them.
 *
 * @since 0.1.0
 * @category combinators
 */
export const frameToEvent = (framing: Dialect.Framing, text: string): { readonly event: string; readonly data: string } | undefined => {
  const json = parseJson(text)
  if (!json.ok || !isObject(json.value)) return undefined
  const frame = json.value
  const name = framing === "type-data" ? frame["type"] : frame["event"]
  if (!isString(name)) return undefined
  if (framing === "flat") {
    const { event: _, ...payload } = frame
    return { event: name, data: JSON.stringify(payload) }
  }
  return { event: name, data: JSON.stringify(frame["data"] ?? {}) }
}

/**
 * The WebSocket frame of a Server-Sent Event in a framing (the payload text spliced in as it is).
 *
 * @since 0.1.0
 * @category combinators
 */
export const eventToFrame = (framing: Dialect.Framing, event: string, data: string): string => {
  const payload = data.length === 0 ? "{}" : data
  if (framing === "flat") {
    const json = parseJson(payload)
    if (json.ok && isObject(json.value)) return JSON.stringify({ ...json.value, event })
  }
  return `{${JSON.stringify(framing === "type-data" ? "type" : "event")}:${JSON.stringify(event)},"data":${payload}}`
}

// ---------------------------------------------------------------------------
// Serving a recorded end again
// ---------------------------------------------------------------------------

/**
 * What a server does to end a connection as the recorded one ended.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerEnd =
  /** Refuse the connection with this HTTP status (before it opened). */
  | { readonly _tag: "Refuse"; readonly status: number; readonly reason: string }
  /** Destroy the socket before it opens (an open failure). */
  | { readonly _tag: "Reset" }
  /** Never answer the connection (a connect time-out): the client gives up. */
  | { readonly _tag: "Hang" }
  /** Close a WebSocket with this code (on SSE: end the response). */
  | { readonly _tag: "Close"; readonly code: number; readonly reason: string }
  /** Drop the connection abruptly (1006, a read failure). */
  | { readonly _tag: "Drop" }
  /** Server-Sent Events: end the response. */
  | { readonly _tag: "EndStream" }
  /** The client ended it (complete, an idle time-out, a frame error, its own close): wait for it. */
  | { readonly _tag: "AwaitClient" }
  /** Send a frame larger than the client accepts (it then refuses it). */
  | { readonly _tag: "TooLarge"; readonly size: number }

const statusIn = (cause: string): number | undefined => {
  const match = /refused with HTTP (\d{3})\b/.exec(cause)
  return match === null ? undefined : Number(match[1])
}

/**
 * How a server ends a connection so that a client sees what the recorded one saw. The causes
 * are the engines' own descriptions of an attempt's end (`closed with code N`, `... refused with
 * HTTP N`, `open failed`, `read failed`, `the event stream ended`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const serverEndOf = (close: CloseEntry): ServerEnd => {
  const outcome = close.outcome
  switch (outcome._tag) {
    case "Interrupted":
      return { _tag: "AwaitClient" }
    case "Defect":
      return { _tag: "Drop" }
    case "End":
      return outcome.reason === "complete"
        ? { _tag: "Close", code: 1000, reason: "complete" }
        : outcome.reason === "closed-by-service"
        ? { _tag: "Close", code: 1000, reason: "" }
        : { _tag: "AwaitClient" }
    case "Fatal": {
      const error = outcome.error
      if (error._tag === "HandshakeRejected" && typeof error["code"] === "number") {
        const reason = isString(error["reason"]) ? error["reason"] : ""
        return close.opened || error["code"] >= 1000
          ? { _tag: "Close", code: error["code"], reason }
          : { _tag: "Refuse", status: error["code"], reason }
      }
      if (error._tag === "FrameTooLarge" && typeof error["size"] === "number") return { _tag: "TooLarge", size: error["size"] }
      if (error._tag === "Superseded") return { _tag: "Close", code: 4000, reason: isString(error["reason"]) ? error["reason"] : "superseded" }
      return { _tag: "AwaitClient" }
    }
    case "Retry": {
      if (outcome.error !== undefined) return outcome.error._tag === "ConnectTimeout" ? { _tag: "Hang" } : { _tag: "Drop" }
      const cause = outcome.cause ?? ""
      const closed = /^closed with code (\d+)(?:: ([\s\S]*))?$/.exec(cause)
      if (closed !== null) {
        const code = Number(closed[1])
        return code === 1006 || code === 1015 ? { _tag: "Drop" } : { _tag: "Close", code, reason: closed[2] ?? "" }
      }
      const status = statusIn(cause)
      if (status !== undefined) return { _tag: "Refuse", status, reason: cause }
      if (cause.startsWith("open failed")) return { _tag: "Reset" }
      if (cause.startsWith("read failed")) return { _tag: "Drop" }
      if (cause === "the event stream ended") return { _tag: "EndStream" }
      return close.opened ? { _tag: "AwaitClient" } : { _tag: "Reset" }
    }
  }
}

// ---------------------------------------------------------------------------
// Reading a file
// ---------------------------------------------------------------------------
//
// A recording is read line by line, never whole: a block of 64 KiB at a time, at most one
// unfinished line held (of at most `maxLineLength` characters), each line parsed and validated
// as it is reached. The shells turn an `Invalid` into their `InvalidRecording`.
//
// The reads are synchronous, on purpose: a replay under a test clock must not wait for I/O
// between two recorded steps (the clock would run ahead of a replay waiting for the disk, and the
// steps after would be scheduled past the time the test advanced to). A 64 KiB read from a local
// file takes microseconds; memory stays bounded whatever the size of the file.

/**
 * The longest line read by default: 16 Mi characters (a 1 MiB frame escaped is at most 6 MiB).
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultMaxLineLength = 16 * 1024 * 1024

const BLOCK = 64 * 1024

/**
 * The synchronous file functions a {@link Reader} reads through: pass `node:fs` (whose
 * functions have these shapes). A function that throws is a file that cannot be read.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileSystemSync {
  readonly openSync: (path: string, flags: "r") => number
  readonly readSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: null) => number
  readonly closeSync: (fd: number) => void
}

/**
 * Why a recording cannot be read further, and where.
 *
 * @since 0.1.0
 * @category models
 */
export interface Invalid {
  readonly _tag: "Invalid"
  /** 1-based; 0 when the file itself could not be read. */
  readonly line: number
  readonly reason: string
}

/**
 * How many line ends come before the first bytes that are not UTF-8 in a block (the block starts
 * on the line being read). A line end (0x0A) is never part of a multi-byte character, so the
 * block is checked line by line; the bytes continuing a character begun in the block before are
 * skipped.
 */
const badLineIn = (bytes: Uint8Array): number => {
  const strict = new TextDecoder("utf-8", { fatal: true })
  let start = 0
  while (start < bytes.length && start < 3 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++
  let lines = 0
  while (start <= bytes.length) {
    const end = bytes.indexOf(0x0a, start)
    const stop = end < 0 ? bytes.length : end
    try {
      // The last piece may end inside a character the next block completes.
      strict.decode(bytes.subarray(start, stop), { stream: end < 0 })
    } catch {
      return lines
    }
    if (end < 0) return lines
    lines++
    start = end + 1
  }
  return lines
}

/**
 * An entry and its line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Numbered {
  readonly _tag: "Entry"
  readonly line: number
  readonly entry: Entry
}

/**
 * The end of the file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Done {
  readonly _tag: "Done"
  /** The last line read. */
  readonly line: number
}

const invalid = (line: number, reason: string): Invalid => ({ _tag: "Invalid", line, reason })

const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/**
 * A recording open for reading, positioned after its header.
 *
 * @since 0.1.0
 * @category models
 */
export class Reader {
  private readonly splitter: LineSplitter
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })
  private readonly buffer = new Uint8Array(BLOCK)
  private lines: Array<string> = []
  private next = 0
  private eof = false
  private failed: Invalid | undefined
  /** A line over the limit, reported once the lines before it are read. */
  private tooLong = false
  private peeked: Numbered | Done | Invalid | undefined
  /** The last line read. */
  line = 0

  private constructor(private readonly fs: FileSystemSync, private fd: number | undefined, maxLineLength: number) {
    this.splitter = new LineSplitter(maxLineLength)
  }

  /** The most characters of an unfinished line held at once (a bound the tests check). */
  get peakHeld(): number {
    return this.splitter.peak
  }

  /** Opens a recording through `fs` (`node:fs`) and reads its header. */
  static open(
    path: string,
    fs: FileSystemSync,
    maxLineLength = defaultMaxLineLength
  ): { readonly reader: Reader; readonly header: Header } | Invalid {
    let fd: number
    try {
      fd = fs.openSync(path, "r")
    } catch (cause) {
      return invalid(0, `cannot be read: ${describe(cause)}`)
    }
    const reader = new Reader(fs, fd, maxLineLength)
    let first = reader.readLine()
    while (typeof first === "string" && first.trim().length === 0) first = reader.readLine()
    if (typeof first !== "string") {
      reader.close()
      return first._tag === "Invalid" ? first : invalid(1, "the file is empty: not a recording")
    }
    const header = parseHeader(first)
    if (!header.ok) {
      reader.close()
      return invalid(1, header.reason)
    }
    return { reader, header: header.value }
  }

  /** The next line's text, the end, or why it cannot be read. */
  private readLine(): string | Done | Invalid {
    if (this.failed !== undefined) return this.failed
    while (this.next >= this.lines.length) {
      this.lines = []
      this.next = 0
      if (this.tooLong) {
        return this.fail(invalid(this.line + 1, `a line is longer than ${this.splitter.maxLineLength} characters`))
      }
      if (this.eof) return { _tag: "Done", line: this.line }
      const block = this.readBlock()
      if ("_tag" in block) return this.fail(block)
      const { lines, tooLong } = block.end ? this.finish(block.text) : this.splitter.push(block.text)
      this.tooLong = tooLong
      this.lines = lines
    }
    this.line += 1
    const text = this.lines[this.next] ?? ""
    this.lines[this.next] = ""
    this.next += 1
    return text
  }

  private finish(text: string): { readonly lines: Array<string>; readonly tooLong: boolean } {
    this.eof = true
    this.close()
    const pushed = this.splitter.push(text)
    const last = pushed.tooLong ? undefined : this.splitter.end()
    return last === undefined ? pushed : { lines: [...pushed.lines, last], tooLong: false }
  }

  /** The next block as text, and whether the file ended. */
  private readBlock(): { readonly text: string; readonly end: boolean } | Invalid {
    if (this.fd === undefined) return { text: "", end: true }
    let read: number
    try {
      read = this.fs.readSync(this.fd, this.buffer, 0, BLOCK, null)
    } catch (cause) {
      return invalid(this.line + 1, `cannot be read: ${describe(cause)}`)
    }
    const bytes = this.buffer.subarray(0, read)
    try {
      return read === 0 ? { text: this.decoder.decode(), end: true } : { text: this.decoder.decode(bytes, { stream: true }), end: false }
    } catch {
      return invalid(this.line + 1 + badLineIn(bytes), "not UTF-8 text")
    }
  }

  private fail(reason: Invalid): Invalid {
    this.failed = reason
    this.close()
    return reason
  }

  /** The next entry (blank lines are skipped), the end of the file, or why not. */
  take(): Numbered | Done | Invalid {
    const peeked = this.peeked
    if (peeked !== undefined) {
      this.peeked = undefined
      return peeked
    }
    while (true) {
      const text = this.readLine()
      if (typeof text !== "string") return text
      if (text.trim().length === 0) continue
      const parsed = parseEntry(text)
      if (!parsed.ok) return this.fail(invalid(this.line, parsed.reason))
      return { _tag: "Entry", line: this.line, entry: parsed.value }
    }
  }

  /** The next entry without taking it. */
  peek(): Numbered | Done | Invalid {
    this.peeked ??= this.take()
    return this.peeked
  }

  /** Closes the file (again is harmless). */
  close(): void {
    const fd = this.fd
    this.fd = undefined
    if (fd !== undefined) {
      try {
        this.fs.closeSync(fd)
      } catch {
        // Closing a file read to its end cannot lose anything.
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Replaying a recording in memory
// ---------------------------------------------------------------------------

/**
 * Why a replay cannot go on: the recording is not valid at a line (`Invalid`), or the
 * application did not do what the recording holds there (`Mismatch`). The editions turn them into
 * their `InvalidRecording` and `ReplayMismatch`.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayProblem =
  | { readonly _tag: "Invalid"; readonly line: number; readonly reason: string }
  | {
    readonly _tag: "Mismatch"
    readonly line: number
    readonly subject: "answer" | "create" | "connection"
    /** What the recording has there (JSON, or a description). */
    readonly expected: string
    /** What the application did (JSON, or a description). */
    readonly actual: string
    /** One line per difference (`field: expected X, got Y`). */
    readonly difference: string
  }

const invalidAt = (line: number, reason: string): ReplayProblem => ({ _tag: "Invalid", line, reason })

const connectionMismatch = (line: number, expected: string, actual: string): ReplayProblem => ({
  _tag: "Mismatch",
  line,
  subject: "connection",
  expected,
  actual,
  difference: `expected ${expected}, got ${actual}`
})

/**
 * The error tags a create can fail with, as the editions name them (their `CreateSessionError`:
 * a time-out of a create is `OutcomeUnknown`). A `create-failed` line with another tag is not valid.
 *
 * @since 0.1.0
 * @category models
 */
export const createErrorTags: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "MissingCredentials",
  "MissingAgentKey",
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "PayloadTooLarge",
  "RateLimited",
  "ServerError",
  "UnexpectedStatus",
  "TransportError",
  "ResponseDecodeError",
  "OutcomeUnknown",
  "ResponseTooLarge"
])

/**
 * The error tags the event channel can end with (the editions' `EventStreamError`, and
 * `ConnectTimeout`, the input of their reconnect schedule).
 *
 * @since 0.1.0
 * @category models
 */
export const eventChannelErrorTags: ReadonlySet<string> = new Set([
  "MalformedFrame",
  "EventDecodeError",
  "FrameTooLarge",
  "UnknownEvent",
  "MissingCredentials",
  "MissingAgentKey",
  "HandshakeRejected",
  "Superseded",
  "ConnectTimeout",
  "ConnectionLost",
  "NeverConnected"
])

/**
 * The reasons a connection ends for good (`Connection.CloseReason`).
 *
 * @since 0.1.0
 * @category models
 */
export const closeReasons: ReadonlySet<string> = new Set([
  "complete",
  "closed-by-caller",
  "closed-by-service",
  "error-event",
  "connection-lost",
  "handshake-rejected",
  "superseded",
  "failed"
] satisfies ReadonlyArray<CloseReason>)

/**
 * What a recorded create answers: the session (`Created`, JSON as recorded), the error it got
 * (`CreateFailed`: the application may create again, the next create line answers it), or nothing
 * recorded (`NotRecorded`: a recording of `attach`, or a create the pass could not read, whose
 * problem the first connection reports): the shell answers the header's session.
 *
 * @since 0.1.0
 * @category models
 */
export type CreateAnswer =
  | { readonly _tag: "Created"; readonly line: number; readonly session: JsonObject }
  | { readonly _tag: "CreateFailed"; readonly line: number; readonly error: EncodedError }
  | { readonly _tag: "NotRecorded" }

/**
 * How a recorded connection ended, for the shell to end its attempt alike: for good (`End`,
 * `Fatal` with the recorded error, its tag one of {@link eventChannelErrorTags}), to be retried
 * (`Retry`: a description of the drop, or the recorded `ConnectTimeout`), by the application
 * (`AwaitClose`: wait for it), or a defect of the transport (`Defect`).
 *
 * @since 0.1.0
 * @category models
 */
export type RecordedEnd =
  | { readonly _tag: "End"; readonly reason: CloseReason }
  | { readonly _tag: "Fatal"; readonly reason: CloseReason; readonly error: EncodedError }
  | { readonly _tag: "Retry"; readonly cause: string }
  | { readonly _tag: "RetryConnectTimeout"; readonly error: EncodedError }
  | { readonly _tag: "AwaitClose" }
  | { readonly _tag: "Defect" }

/**
 * How a `close` line's outcome ends the replayed attempt, or why it is not valid.
 *
 * @since 0.1.0
 * @category combinators
 */
export const recordedEnd = (close: CloseEntry, line: number): RecordedEnd | ReplayProblem => {
  const outcome = close.outcome
  const broken = (reason: string) => invalidAt(line, `close: ${reason}`)
  switch (outcome._tag) {
    case "End":
      return closeReasons.has(outcome.reason)
        ? { _tag: "End", reason: outcome.reason as CloseReason }
        : broken(`unknown reason "${outcome.reason}"`)
    case "Fatal":
      return eventChannelErrorTags.has(outcome.error._tag) && closeReasons.has(outcome.reason)
        ? { _tag: "Fatal", reason: outcome.reason as CloseReason, error: outcome.error }
        : broken("the error is not one of the event channel's")
    case "Retry":
      if (outcome.cause !== undefined) return { _tag: "Retry", cause: outcome.cause }
      return outcome.error?._tag === "ConnectTimeout"
        ? { _tag: "RetryConnectTimeout", error: outcome.error }
        : broken("the error is not one an attempt is retried for")
    case "Interrupted":
      return { _tag: "AwaitClose" }
    case "Defect":
      return { _tag: "Defect" }
  }
}

/**
 * Whether a value is a {@link ReplayProblem} (and not a step of the replay).
 *
 * @since 0.1.0
 * @category guards
 */
export const isReplayProblem = (u: unknown): u is ReplayProblem =>
  typeof u === "object" && u !== null && "_tag" in u && (u._tag === "Invalid" || u._tag === "Mismatch")

/**
 * The recorded answer against the application's: the `Mismatch` to report, or nothing when they
 * are the same. `given` is the application's answer as the recording would keep it (the
 * recording's `redact` applied), `undefined` when none came within `waited` (a description).
 *
 * @since 0.1.0
 * @category combinators
 */
export const checkAnswer = (
  recorded: AnswerEntry,
  line: number,
  given: AnswerData | undefined,
  waited: string
): ReplayProblem | undefined => {
  const expected = JSON.stringify(recorded.data)
  if (given === undefined) {
    return {
      _tag: "Mismatch",
      line,
      subject: "answer",
      expected,
      actual: `no answer within ${waited}`,
      difference: `expected the answer ${expected}, got no answer within ${waited}`
    }
  }
  const diff = difference(recorded.data, given)
  return diff.length === 0
    ? undefined
    : { _tag: "Mismatch", line, subject: "answer", expected, actual: JSON.stringify(given), difference: diff }
}

/**
 * One pass over a recording, replaying one session in memory, without I/O of its own beyond the
 * {@link Reader}'s: the create lines answer the application's create (compared with the recorded
 * request), then each attempt of the application's engine plays the next recorded connection. The
 * shell decodes what the pass hands it (the session, the errors), sleeps until each line's `t`,
 * feeds frames to its engine and compares answers ({@link checkAnswer}).
 *
 * A problem met while creating (a create that differed, a line not valid) is kept as
 * {@link failure} and reported by the first connection: the create itself answers as recorded.
 *
 * @since 0.1.0
 * @category models
 */
export class ReplayPass {
  /** `create`: the create lines are next; `events`: the connections are. */
  phase: "create" | "events" = "create"
  /** What ends the next connection (a create that differed, a line not valid). */
  failure: ReplayProblem | undefined = undefined

  /** A pass over an open reader; without one, every connection fails with `failure`. */
  constructor(readonly reader: Reader | undefined, failure?: ReplayProblem) {
    if (failure !== undefined) {
      this.phase = "events"
      this.failure = failure
    }
  }

  /** Keeps the first problem met (later ones follow from it). */
  fail(problem: ReplayProblem): void {
    this.failure ??= problem
  }

  /**
   * Answers the application's create: `actual` is its request as the recording encodes it (the
   * edition's schema encoded). A different request is kept as a `Mismatch` of `create`.
   */
  create(actual: unknown): CreateAnswer {
    const reader = this.reader
    if (reader === undefined) return { _tag: "NotRecorded" }
    const next = reader.peek()
    if (next._tag !== "Entry" || next.entry.type !== "create") {
      // A recording without a create (of `attach`): the recorded session, as it is.
      this.phase = "events"
      if (next._tag === "Invalid") this.failure = invalidAt(next.line, next.reason)
      return { _tag: "NotRecorded" }
    }
    reader.take()
    const diff = difference(next.entry.request, actual)
    if (diff.length > 0) {
      this.failure = {
        _tag: "Mismatch",
        line: next.line,
        subject: "create",
        expected: JSON.stringify(next.entry.request),
        actual: JSON.stringify(actual),
        difference: diff
      }
    }
    const result = reader.take()
    if (result._tag === "Entry" && result.entry.type === "created") {
      this.phase = "events"
      return { _tag: "Created", line: result.line, session: result.entry.session }
    }
    if (result._tag === "Entry" && result.entry.type === "create-failed") {
      if (createErrorTags.has(result.entry.error._tag)) return { _tag: "CreateFailed", line: result.line, error: result.entry.error }
      this.fail(invalidAt(result.line, "create-failed: the error is not one a create can fail with"))
    } else {
      this.fail(
        result._tag === "Invalid"
          ? invalidAt(result.line, result.reason)
          : invalidAt(result.line, "a create line without its result (created or create-failed)")
      )
    }
    this.phase = "events"
    return { _tag: "NotRecorded" }
  }

  /**
   * Where the application's next connection (to `sessionId`) starts in the recording: its
   * `connect` line, or why it cannot be played (the problem kept from the create, a connection to
   * another session, no more connections, a recorded connection the application's ended before).
   * What is left of the previous connection is skipped: the engine ended it itself, as it did
   * when it was recorded.
   */
  nextConnection(sessionId: string, recordedSessionId: string): Numbered | ReplayProblem {
    const reader = this.reader
    if (this.failure !== undefined || reader === undefined) {
      const failure = this.failure ?? invalidAt(0, "the recording cannot be read again")
      if (reader !== undefined) this.failure = undefined
      return failure
    }
    if (sessionId !== recordedSessionId) {
      return connectionMismatch(1, `a connection to session ${recordedSessionId}`, `one to ${sessionId}`)
    }
    for (;;) {
      const next = reader.take()
      if (next._tag === "Invalid") return invalidAt(next.line, next.reason)
      if (next._tag === "Done" || next.entry.type === "end") {
        return connectionMismatch(next.line, "no more connections (the recording ends here)", "the application connected again")
      }
      switch (next.entry.type) {
        case "connect":
          return next
        case "frame":
        case "answer":
        case "too-large":
          return connectionMismatch(
            next.line,
            "the recorded connection to go on here",
            "the application's connection ended before it"
          )
        default:
          // `close`, `alive`, `open` of a connection the engine ended: nothing to play.
          break
      }
    }
  }

  /**
   * The next line of the connection being played (`open`, `frame`, `too-large`, `alive`,
   * `answer`, `close`), or why there is none: the file ends, or a line of another kind comes
   * before the connection `conn` closed.
   */
  nextInConnection(conn: number): Numbered | ReplayProblem {
    const reader = this.reader
    if (reader === undefined) return invalidAt(0, "the recording cannot be read again")
    const next = reader.take()
    if (next._tag === "Invalid") return invalidAt(next.line, next.reason)
    if (next._tag === "Done") return invalidAt(next.line, "the recording ends before its connection closed")
    switch (next.entry.type) {
      case "connect":
      case "end":
      case "create":
      case "created":
      case "create-failed":
        return invalidAt(next.line, `a ${next.entry.type} line before connection ${conn} closed`)
      default:
        return next
    }
  }
}
