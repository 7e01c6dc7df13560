/**
 * The codecs a dialect selects, without the schemas: how a server frame is read into an event
 * name and its JSON payload, within the size and depth bounds; how an event is framed;
 * the handshake message; the answer frame; how a frame a client sent is read.
 * Everything here is synchronous and total: any input gives a result, never a thrown exception.
 *
 * Decoding a payload into a typed event stays with each edition's schemas: the reader hands the
 * edition the parsed name and payload, and builds nothing of its own but what the edition's
 * handlers return (so the per-frame path allocates no wrapper of the core's).
 *
 * @since 0.1.0
 */
import type { Dialect, Framing } from "./Dialect.js"
import { wireNames } from "./Events.js"
import { defaultMaxDepth, exceedsDepth } from "./Json.js"

/**
 * The largest frame accepted by default: 1 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxFrameSize = 1024 * 1024

/**
 * The largest frame a client may send on the event channel by default (handshakes and answers
 * are small): 64 KiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxClientFrameSize = 64 * 1024

const textDecoder = new TextDecoder()
const textEncoder = new TextEncoder()

/**
 * The size of text in UTF-8 bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const utf8Size = (text: string): number => textEncoder.encode(text).byteLength

/**
 * The UTF-8 size of text when it is over `limit` bytes, else `undefined`. A string of n UTF-16
 * units is n to 3n UTF-8 bytes: it is measured exactly only when that matters.
 *
 * @since 0.1.0
 * @category guards
 */
export const sizeOver = (text: string, limit: number): number | undefined => {
  if (text.length > limit) return text.length
  if (text.length * 3 > limit) {
    const size = utf8Size(text)
    if (size > limit) return size
  }
  return undefined
}

/**
 * The member that names the event in a framing: `type` for `type-data`, else `event`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nameKeyOf = (framing: Framing): "event" | "type" => framing === "type-data" ? "type" : "event"

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** What {@link parseJson} gives for a text that is not JSON (no JSON text parses to a symbol). */
const notJson: unique symbol = Symbol("notJson")

/** The parsed value of a JSON text, or {@link notJson} (no wrapper on the per-frame path). */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return notJson
  }
}

/**
 * The longest frame (in UTF-16 units) parsed before its depth is checked: parsing a text of this
 * size nested as deep as it can be takes under a millisecond, a bound on what a hostile frame can
 * cost before it is refused.
 */
const PARSE_FIRST_UP_TO = 4096

/** What a known event without data decodes from (the plain decoders only read it). */
const emptyPayload: { readonly [key: string]: unknown } = {}

/**
 * What a frame reader makes of each outcome: the edition's own values (an `Either`, an exit, ...).
 *
 * @since 0.1.0
 * @category models
 */
export interface FrameHandlers<R> {
  /**
   * Decoders by event name that give the result without the edition's schema, or `undefined`
   * to fall back to {@link FrameHandlers.event} (see {@link plainDecoders}).
   */
  readonly plain: ReadonlyMap<string, (payload: unknown) => R | undefined>
  /** An event named `name` with its payload (`undefined` when the frame had none), from `text`. */
  readonly event: (name: string, payload: unknown, text: string) => R
  /** A frame over the size bound: its size in bytes, and the bound. */
  readonly tooLarge: (size: number, limit: number) => R
  /** A frame that is not JSON, not an object, names no event, or nests too deep. */
  readonly malformed: (text: string, message: string) => R
}

/**
 * Options of a frame reader.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  /** The largest frame accepted, in bytes (default {@link defaultMaxFrameSize}). */
  readonly maxFrameSize?: number | undefined
  /** The deepest nesting of objects and arrays accepted (default `Json.defaultMaxDepth`). */
  readonly maxDepth?: number | undefined
}

/**
 * A reader of the frames of a framing: size bound, then (for a short frame) `JSON.parse` and the
 * plain decoders, the depth bound, and the event's name and payload handed to `handlers.event`.
 *
 * The depth bound guards what walks a parsed value. An event of plain string fields keeps only
 * strings, and `JSON.parse` is iterative: a short frame is parsed first, and its text scanned for
 * depth only when it is not such an event. A long frame is scanned first (parsing a deep text
 * costs several times its scan).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFrameReader = <R>(
  framing: Framing,
  options: ReadOptions,
  handlers: FrameHandlers<R>
): FrameReader<R> => {
  const limit = options.maxFrameSize ?? defaultMaxFrameSize
  const maxDepth = options.maxDepth ?? defaultMaxDepth
  const nameKey = nameKeyOf(framing)
  const flat = framing === "flat"
  const { plain } = handlers
  const tooDeep = `nested deeper than ${maxDepth} levels`
  const read = (frame: string | Uint8Array): R => {
    let text: string
    if (typeof frame === "string") {
      const over = sizeOver(frame, limit)
      if (over !== undefined) return handlers.tooLarge(over, limit)
      text = frame
    } else {
      if (frame.byteLength > limit) return handlers.tooLarge(frame.byteLength, limit)
      text = textDecoder.decode(frame)
    }
    const scanFirst = text.length > PARSE_FIRST_UP_TO
    if (scanFirst && exceedsDepth(text, maxDepth)) return handlers.malformed(text, tooDeep)
    const parsed = parseJson(text)
    if (isRecord(parsed)) {
      const name = parsed[nameKey]
      const decode = typeof name === "string" ? plain.get(name) : undefined
      if (decode !== undefined) {
        // A known event without data decodes as an empty payload (heartbeat, connected).
        const event = decode(flat ? parsed : parsed["data"] ?? emptyPayload)
        if (event !== undefined) return event
      }
    }
    if (!scanFirst && exceedsDepth(text, maxDepth)) return handlers.malformed(text, tooDeep)
    if (parsed === notJson) return handlers.malformed(text, "not JSON")
    if (!isRecord(parsed)) return handlers.malformed(text, "not a JSON object")
    const name = parsed[nameKey]
    if (typeof name !== "string" || name.length === 0) return handlers.malformed(text, `no "${nameKey}" naming the event`)
    if (!flat) return handlers.event(name, parsed["data"], text)
    const { [nameKey]: _name, ...rest } = parsed
    return handlers.event(name, rest, text)
  }
  // A named event is read as the frame `{"event":name,"data":data}` would be, without that frame:
  // its data is parsed once, and the frame's text is built only for what the handlers keep of it
  // (an error's raw text, an unknown event). The data sits one level inside that frame.
  const dataDepth = maxDepth - 1
  const named = (name: string, data: string): R => {
    // The frame's bound in bytes (an SSE parser bounds its data in characters).
    const over = sizeOver(data, limit)
    if (over !== undefined) return handlers.tooLarge(over, limit)
    const scanFirst = data.length > PARSE_FIRST_UP_TO
    if (scanFirst && exceedsDepth(data, dataDepth)) return handlers.malformed(eventDataFrame(name, data), tooDeep)
    const parsed = data.length === 0 ? {} : parseJson(data)
    const decode = plain.get(name)
    if (decode !== undefined && parsed !== notJson) {
      const event = decode(parsed ?? emptyPayload)
      if (event !== undefined) return event
    }
    if (!scanFirst && exceedsDepth(data, dataDepth)) return handlers.malformed(eventDataFrame(name, data), tooDeep)
    if (parsed === notJson) return handlers.malformed(eventDataFrame(name, data), "not JSON")
    if (name.length === 0) return handlers.malformed(eventDataFrame(name, data), `no "event" naming the event`)
    return handlers.event(name, parsed, eventDataFrame(name, data))
  }
  return Object.assign(read, { named })
}

/**
 * A frame reader: one frame in, the handlers' result out; or, for a transport that carries the
 * name apart from the data (Server-Sent Events), one named event.
 *
 * @since 0.1.0
 * @category models
 */
export interface FrameReader<R> {
  (frame: string | Uint8Array): R
  /**
   * One event given as its name and its data (the JSON payload's text; empty for none), read as
   * the `event-data` frame `{"event":name,"data":data}` would be, without building that frame.
   */
  readonly named: (name: string, data: string) => R
}

/** The `event-data` frame a named event stands for (an empty data is an empty payload). */
const eventDataFrame = (name: string, data: string): string =>
  `{"event":${JSON.stringify(name)},"data":${data.length === 0 ? "{}" : data}}`

/**
 * An event whose every field is a required string: its wire name, the edition's tag, and its
 * fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface PlainEvent {
  readonly name: string
  readonly tag: string
  readonly fields: ReadonlyArray<string>
}

/**
 * What one property of an event's schema is to {@link plainEventOf}: the event's tag (a string
 * literal `_tag`), a required string field (plain or branded: a brand adds no check), or neither.
 *
 * @since 0.1.0
 * @category models
 */
export type PlainProperty = { readonly tag: string } | { readonly field: string } | undefined

/**
 * The plain event of a schema's properties, each told apart by `classify`: its tag, its wire name
 * (`Events.wireNames`) and its string fields, or `undefined` when a property is neither the tag
 * nor a required string, or the tag is not a known event's. Run once per edition, not per frame.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plainEventOf = <P>(
  properties: Iterable<P>,
  classify: (property: P) => PlainProperty
): PlainEvent | undefined => {
  let tag: string | undefined
  const fields: Array<string> = []
  for (const property of properties) {
    const kind = classify(property)
    if (kind === undefined) return undefined
    if ("tag" in kind) tag = kind.tag
    else fields.push(kind.field)
  }
  const name = tag === undefined ? undefined : wireNameOfTag.get(tag)
  return tag === undefined || name === undefined ? undefined : { name, tag, fields }
}

const wireNameOfTag: ReadonlyMap<string, string> = new Map(Object.entries(wireNames))

/** A new event of the tag, its fields to be set. */
const newEvent = (tag: string): Record<string, unknown> => ({ _tag: tag })

/**
 * The decoder of an event whose fields are all required strings: `{ _tag, ...those fields }`
 * given to `wrap`, or `undefined` when a field is missing or not a string (the edition's schema
 * then decodes it, for its error message). Unrolled up to three fields: one property access site
 * per field position keeps a decoder that sees one event monomorphic (src/internal/README.md, "Frame
 * decoding").
 */
const plainDecoder = <R>(
  tag: string,
  fields: ReadonlyArray<string>,
  wrap: (event: Record<string, unknown>) => R
): (payload: unknown) => R | undefined => {
  const [a = "", b = "", c = ""] = fields
  switch (fields.length) {
    case 0:
      return (payload) => isRecord(payload) ? wrap(newEvent(tag)) : undefined
    case 1:
      return (payload) => {
        if (!isRecord(payload)) return undefined
        const x = payload[a]
        if (typeof x !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        return wrap(out)
      }
    case 2:
      return (payload) => {
        if (!isRecord(payload)) return undefined
        const x = payload[a]
        const y = payload[b]
        if (typeof x !== "string" || typeof y !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        out[b] = y
        return wrap(out)
      }
    case 3:
      return (payload) => {
        if (!isRecord(payload)) return undefined
        const x = payload[a]
        const y = payload[b]
        const z = payload[c]
        if (typeof x !== "string" || typeof y !== "string" || typeof z !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        out[b] = y
        out[c] = z
        return wrap(out)
      }
    default:
      return (payload) => {
        if (!isRecord(payload)) return undefined
        const out = newEvent(tag)
        for (const field of fields) {
          const value = payload[field]
          if (typeof value !== "string") return undefined
          out[field] = value
        }
        return wrap(out)
      }
  }
}

/**
 * The plain decoders of a framing, by wire name, for {@link FrameHandlers.plain}: each copies the
 * string fields of its event with the edition's tag, which is what a schema of required string
 * fields gives (excess properties ignored), found by `typeof` checks without the schema
 * interpreter. The flat framing reads the fields from the frame itself (its name member is an
 * excess property), so an event with a field of that name gets none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plainDecoders = <R>(
  framing: Framing,
  events: Iterable<PlainEvent>,
  wrap: (event: Record<string, unknown>) => R
): ReadonlyMap<string, (payload: unknown) => R | undefined> => {
  const nameKey = framing === "flat" ? nameKeyOf(framing) : undefined
  const decoders = new Map<string, (payload: unknown) => R | undefined>()
  for (const { fields, name, tag } of events) {
    if (nameKey === undefined || !fields.includes(nameKey)) decoders.set(name, plainDecoder(tag, fields, wrap))
  }
  return decoders
}

/**
 * An event as a frame of the framing (the simulator sends with this).
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeFrame = (framing: Framing, name: string, payload: unknown): string => {
  switch (framing) {
    case "event-data":
      return JSON.stringify({ event: name, data: payload })
    case "type-data":
      return JSON.stringify({ type: name, data: payload })
    case "flat":
      return JSON.stringify({ ...(isRecord(payload) ? payload : { data: payload }), event: name })
  }
}

// ---------------------------------------------------------------------------
// Handshake
// ---------------------------------------------------------------------------

/**
 * The first message of the `message` handshake: `{ apiKey, sessionId }`. It holds the key:
 * never log it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handshakeMessage = (apiKey: string, sessionId: string): string => JSON.stringify({ apiKey, sessionId })

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

/**
 * The wire name of answer frames.
 *
 * @since 0.1.0
 * @category models
 */
export const answerEventName = "external_resource_granted"

/**
 * The payload of an answer frame (`external_resource_granted` sent by the client).
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerData {
  readonly granted: boolean
  readonly resource_type: string
  readonly action_session_id?: string | undefined
  readonly field_name?: string | undefined
  readonly input?: string | undefined
}

/**
 * The payload of the answer to a request: granted or not, the request's raw resource type and
 * action session, its field name if it named one, and the input of a grant that carries one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerData = (answer: {
  readonly granted: boolean
  readonly resourceType: string
  readonly actionSessionId: string
  readonly fieldName?: string | undefined
  readonly input?: string | undefined
}): AnswerData => {
  const data: {
    granted: boolean
    resource_type: string
    action_session_id: string
    field_name?: string
    input?: string
  } = {
    granted: answer.granted,
    resource_type: answer.resourceType,
    action_session_id: answer.actionSessionId
  }
  if (answer.fieldName !== undefined) data.field_name = answer.fieldName
  if (answer.granted && answer.input !== undefined) data.input = answer.input
  return data
}

/**
 * The answer frame of a dialect: `{ event | type: "external_resource_granted", data }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeAnswer = (answerKey: Dialect["answerKey"], data: AnswerData): string =>
  JSON.stringify({ [answerKey]: answerEventName, data })

/**
 * A frame a client sent, as the server reads it before the edition's schemas decode it: an answer
 * (framed with `event` or `type`) with its payload, else a candidate handshake, or why it is
 * neither.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientFrameText =
  | { readonly _tag: "Answer"; readonly data: unknown }
  | { readonly _tag: "Handshake"; readonly value: { readonly [key: string]: unknown } }
  | { readonly _tag: "TooLarge"; readonly size: number; readonly limit: number }
  | { readonly _tag: "Malformed"; readonly message: string }

/**
 * The message of a client's frame that is a JSON object but neither an answer nor a handshake
 * (`{ apiKey, sessionId }`, both strings).
 *
 * @since 0.1.0
 * @category models
 */
export const NEITHER_HANDSHAKE_NOR_ANSWER = "neither a handshake nor an answer"

/**
 * Reads a frame a client sent (the simulator reads with this): over the size bound (default
 * {@link defaultMaxClientFrameSize}) it is `TooLarge`; nested deeper than the depth bound, not
 * JSON, or not an object, `Malformed` (whose message never prints the value).
 *
 * @since 0.1.0
 * @category constructors
 */
export const readClientFrame = (text: string, options: ReadOptions = {}): ClientFrameText => {
  const limit = options.maxFrameSize ?? defaultMaxClientFrameSize
  const maxDepth = options.maxDepth ?? defaultMaxDepth
  const size = sizeOver(text, limit)
  if (size !== undefined) return { _tag: "TooLarge", size, limit }
  if (exceedsDepth(text, maxDepth)) return { _tag: "Malformed", message: `nested deeper than ${maxDepth} levels` }
  const parsed = parseJson(text)
  if (parsed === notJson) return { _tag: "Malformed", message: "not JSON" }
  if (!isRecord(parsed)) return { _tag: "Malformed", message: "not a JSON object" }
  const name = parsed["event"] ?? parsed["type"]
  return name === answerEventName ? { _tag: "Answer", data: parsed["data"] } : { _tag: "Handshake", value: parsed }
}
