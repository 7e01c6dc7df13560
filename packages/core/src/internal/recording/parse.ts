/**
 * Parsing and validating the lines of a recording (`Recording.parseHeader`, `parseEntry`,
 * `encodeLine`), and the small checks the other parts of the format share. Re-exported by
 * `Recording`.
 */
import type * as Dialect from "../../Dialect.js"
import { isObject, isString, parseJson } from "./json.js"
import {
  type AnswerData,
  type CloseEntry,
  type AnswerResult,
  type EncodedError,
  type Entry,
  FORMAT,
  type Header,
  type Line,
  type Outcome,
  type Parsed,
  type Transport,
  VERSION
} from "./model.js"
import { isFinalStatus, MAX_TOO_LARGE_SIZE, serverEndOf, serverEndProblem } from "./serve.js"

const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const no = (reason: string): Parsed<never> => ({ ok: false, reason })

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

type Obj = { readonly [field: string]: unknown }

export { isObject, isString, parseJson }

/** Milliseconds since the recording started: not negative, and exact (a safe integer at most). */
const isTime = (u: unknown): u is number => typeof u === "number" && u >= 0 && u <= Number.MAX_SAFE_INTEGER
/** A connection's number: an integer from 1, exact. */
const isCount = (u: unknown): u is number => Number.isSafeInteger(u) && (u as number) >= 1
/** The size of a frame too large: an integer from 1 to {@link MAX_TOO_LARGE_SIZE} (a server rebuilds it). */
const isTooLargeSize = (u: unknown): u is number =>
  Number.isSafeInteger(u) && (u as number) >= 1 && (u as number) <= MAX_TOO_LARGE_SIZE
/** Base64 as `Buffer.from(text, "base64")` reads it back whole (it skips what is not base64, silently). */
const isBase64 = (u: unknown): u is string => isString(u) && u.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(u)
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
  "too-large": { t: isTime, conn: isCount, size: isTooLargeSize },
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
  if (u["base64"] !== undefined && !isBase64(u["base64"])) return `"base64" is not valid base64`
  const forms = [
    isString(u["text"]) ? "text" : undefined,
    isString(u["base64"]) ? "base64" : undefined,
    isString(u["event"]) && isString(u["data"]) ? "event" : undefined
  ].filter((form) => form !== undefined)
  return forms.length === 1 ? undefined : `a frame has exactly one of "text", "base64" or "event" with "data"`
}

/**
 * What a server would make of a line it serves again, when it cannot: a frame's form or base64, a
 * create's error status (the response's), a close's code, status or size (see `serverEndOf`).
 */
const servedAgain = (u: Obj): string | undefined => {
  switch (u["type"]) {
    case "frame":
      return frameForm(u)
    case "create-failed": {
      const status = isObject(u["error"]) ? u["error"]["status"] : undefined
      return status === undefined || isFinalStatus(status)
        ? undefined
        : `"status" of the error is not a final HTTP status (an integer from 200 to 599): ${JSON.stringify(status)}`
    }
    case "close":
      return serverEndProblem(serverEndOf(u as unknown as CloseEntry))
    default:
      return undefined
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
  const wrong = check(u, entryFields[type as Entry["type"]]) ?? servedAgain(u)
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
