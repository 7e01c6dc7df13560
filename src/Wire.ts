/**
 * The codecs a {@link Dialect.Dialect} selects: how server frames are decoded (U09), how the
 * connection payload is delivered (U08), and how answers are framed (U16). Everything here is
 * synchronous and total: a frame gives an event or a typed error, never a thrown exception.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Answer from "./Answer.js"
import type * as Dialect from "./Dialect.js"
import { EventDecodeError, type FrameError, FrameTooLarge, MalformedFrame, truncateRaw, UnknownEvent } from "./Errors.js"
import * as Json from "./internal/json.js"
import { formatIssues } from "./internal/schema.js"
import * as SessionEvent from "./SessionEvent.js"

/**
 * The largest frame accepted by default: 1 MiB (U22).
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxFrameSize = 1024 * 1024

/**
 * The deepest nesting of objects and arrays a frame may have by default: 64. The service's
 * payloads nest three or four levels; a deeper frame is refused (`MalformedFrame`) before
 * anything walks its value, so nothing that does later (formatters, `JSON.stringify`) can overflow
 * the stack, whatever a peer sends. One kind of frame is not refused, as it keeps no deep value:
 * a frame of up to 4,096 characters of a known event whose fields are all strings (`action_run`,
 * `thoughts_and_memories`, ...) keeps only those strings, and deeper properties beside them are
 * dropped like any excess property (such a frame is parsed before its depth is checked, which
 * saves the check on most frames; a longer one is checked first, as parsing deep text costs more
 * than scanning it).
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxDepth: number = Json.defaultMaxDepth

/**
 * The largest frame a client may send on the event channel by default (handshakes and answers
 * are small): 64 KiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxClientFrameSize = 64 * 1024

/**
 * Options of frame decoding.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /** The largest frame accepted, in bytes (default 1 MiB). */
  readonly maxFrameSize?: number | undefined
  /** Unknown event names fail with `UnknownEvent` instead of giving `Unrecognized`. */
  readonly strict?: boolean | undefined
  /** The deepest nesting of objects and arrays accepted (default {@link defaultMaxDepth}). */
  readonly maxDepth?: number | undefined
}

/**
 * A frame decoder: one frame in, an event or a typed frame error out.
 *
 * @since 0.1.0
 * @category models
 */
export type FrameDecoder = (frame: string | Uint8Array) => Either.Either<SessionEvent.SessionEvent, FrameError>

const textDecoder = new TextDecoder()
const textEncoder = new TextEncoder()

const utf8Size = (text: string): number => textEncoder.encode(text).byteLength

/** What a known event without data decodes from (the fast decoders only read it). */
const emptyPayload: { readonly [key: string]: unknown } = {}

const malformed = (text: string, message: string) =>
  Either.left(new MalformedFrame({ raw: truncateRaw(text), message }))

const tooDeep = (text: string, maxDepth: number) => malformed(text, `nested deeper than ${maxDepth} levels`)

/** What {@link parseJson} gives for a text that is not JSON (no JSON text parses to a symbol). */
const notJson: unique symbol = Symbol("notJson")

/** The parsed value of a JSON text, or {@link notJson} (no Either on the per-frame path). */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return notJson
  }
}

/**
 * The longest frame (in UTF-16 units) parsed before its depth is checked: parsing a text of this
 * size nested as deep as it can be (2,048 arrays) takes under a millisecond on Node 20, a bound on
 * what a hostile frame can cost before it is refused.
 */
const parseFirstUpTo = 4096

/** A frame's JSON object, or why it is not one (no Either on the per-frame path). */
const parseObject = (text: string, maxDepth: number): { readonly [key: string]: unknown } | MalformedFrame => {
  if (Json.exceedsDepth(text, maxDepth)) {
    return new MalformedFrame({ raw: truncateRaw(text), message: `nested deeper than ${maxDepth} levels` })
  }
  const parsed = parseJson(text)
  if (parsed === notJson) return new MalformedFrame({ raw: truncateRaw(text), message: "not JSON" })
  return Predicate.isRecord(parsed) ? parsed : new MalformedFrame({ raw: truncateRaw(text), message: "not a JSON object" })
}

type FastDecoder = (payload: unknown) => SessionEvent.SessionEvent | undefined

/**
 * The fast decoder of an event whose fields are all required strings: a copy of those fields
 * with the SDK's tag, or `undefined` (the payload is then decoded by the schema, for its error
 * message). Unrolled up to three fields (one property access site per field position, so a
 * decoder that sees one event keeps monomorphic access): a single loop over the fields for every
 * event cost about a fifth of `JSON.parse` per frame, the unrolled copy a twentieth
 * (bench/frameDecode.ts). More fields (no event has them today) take the loop. Computed keys in
 * an object literal measured slower as soon as one decoder sees two events (V8 has no fast
 * megamorphic path for them), hence the stores.
 */
const fastDecoder = (tag: string, fields: ReadonlyArray<string>): FastDecoder => {
  const [a = "", b = "", c = ""] = fields
  switch (fields.length) {
    case 0:
      return (payload) => Predicate.isRecord(payload) ? newEvent(tag) : undefined
    case 1:
      return (payload) => {
        if (!Predicate.isRecord(payload)) return undefined
        const x = payload[a]
        if (typeof x !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        return out
      }
    case 2:
      return (payload) => {
        if (!Predicate.isRecord(payload)) return undefined
        const x = payload[a]
        const y = payload[b]
        if (typeof x !== "string" || typeof y !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        out[b] = y
        return out
      }
    case 3:
      return (payload) => {
        if (!Predicate.isRecord(payload)) return undefined
        const x = payload[a]
        const y = payload[b]
        const z = payload[c]
        if (typeof x !== "string" || typeof y !== "string" || typeof z !== "string") return undefined
        const out = newEvent(tag)
        out[a] = x
        out[b] = y
        out[c] = z
        return out
      }
    default:
      return (payload) => {
        if (!Predicate.isRecord(payload)) return undefined
        const out = newEvent(tag)
        for (const field of fields) {
          const value = payload[field]
          if (typeof value !== "string") return undefined
          out[field] = value
        }
        return out
      }
  }
}

/** A new event of the tag, its fields to be set (typed as the union: the fast decoders build it). */
const newEvent = (tag: string): SessionEvent.SessionEvent & Record<string, unknown> =>
  ({ _tag: tag }) as SessionEvent.SessionEvent & Record<string, unknown>

// Events whose every field is a required string (plain or branded: a brand adds no check) decode
// to a copy of those fields with the SDK's tag, which is exactly what their schema gives (excess
// properties ignored): a `typeof` check finds it without the schema interpreter, which is a third
// of the per-frame cost. Any other event, or a payload that fails the check, is decoded by its
// schema (with its error message). Derived from the union's schemas, so nothing is written twice.
// Here: the tag and the fields of each such event, by wire name.
const buildFastFields = (): ReadonlyMap<string, { readonly tag: string; readonly fields: ReadonlyArray<string> }> => {
  const fastFields = new Map<string, { readonly tag: string; readonly fields: ReadonlyArray<string> }>()
  for (const member of SessionEvent.SessionEvent.members) {
    const ast = member.ast
    if (!AST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) continue
    let tag: string | undefined
    const fields: Array<string> = []
    let plain = true
    for (const ps of ast.propertySignatures) {
      if (ps.name === "_tag" && AST.isLiteral(ps.type) && typeof ps.type.literal === "string") {
        tag = ps.type.literal
      } else if (typeof ps.name === "string" && !ps.isOptional && AST.isStringKeyword(ps.type)) {
        fields.push(ps.name)
      } else {
        plain = false
      }
    }
    if (!plain || tag === undefined || !Predicate.hasProperty(SessionEvent.wireNames, tag)) continue
    fastFields.set(SessionEvent.wireNames[tag as keyof typeof SessionEvent.wireNames], { tag, fields })
  }
  return fastFields
}

const fastDecodersCache = new Map<string | undefined, ReadonlyMap<string, FastDecoder>>()

/**
 * The fast decoders of a framing, by wire name, built once per framing (not per connection). The
 * flat framing reads the fields from the frame itself (its name key, `flatNameKey`, is an excess
 * property, dropped like any other), so an event with a field of that name has none there.
 */
const fastDecodersOf = (flatNameKey: string | undefined): ReadonlyMap<string, FastDecoder> => {
  let decoders = fastDecodersCache.get(flatNameKey)
  if (decoders === undefined) {
    const built = new Map<string, FastDecoder>()
    for (const [name, { fields, tag }] of buildFastFields()) {
      if (flatNameKey === undefined || !fields.includes(flatNameKey)) built.set(name, fastDecoder(tag, fields))
    }
    fastDecodersCache.set(flatNameKey, built)
    decoders = built
  }
  return decoders
}

/**
 * Builds the frame decoder of a framing. Decoding is synchronous: it never allocates an Effect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDecoder = (framing: Dialect.Framing, options: DecodeOptions = {}): FrameDecoder => {
  const limit = options.maxFrameSize ?? defaultMaxFrameSize
  const strict = options.strict === true
  const maxDepth = options.maxDepth ?? defaultMaxDepth
  const nameKey = framing === "type-data" ? "type" : "event"
  const flat = framing === "flat"
  const fast = fastDecodersOf(flat ? nameKey : undefined)
  return (frame) => {
    let text: string
    if (typeof frame === "string") {
      // A string of n UTF-16 units is n to 3n UTF-8 bytes: measure exactly only when it matters.
      if (frame.length > limit) return Either.left(new FrameTooLarge({ size: frame.length, limit }))
      if (frame.length * 3 > limit) {
        const size = utf8Size(frame)
        if (size > limit) return Either.left(new FrameTooLarge({ size, limit }))
      }
      text = frame
    } else {
      if (frame.byteLength > limit) return Either.left(new FrameTooLarge({ size: frame.byteLength, limit }))
      text = textDecoder.decode(frame)
    }
    // The depth bound guards what walks a parsed value. An event of plain string fields keeps
    // only strings, and `JSON.parse` is iterative: a short frame is parsed first, and its text
    // scanned only when it is not such an event. A long frame is scanned first (parsing a deep
    // text costs several times its scan).
    const scanFirst = text.length > parseFirstUpTo
    if (scanFirst && Json.exceedsDepth(text, maxDepth)) return tooDeep(text, maxDepth)
    const parsed = parseJson(text)
    if (Predicate.isRecord(parsed)) {
      const name = parsed[nameKey]
      const fastDecode = typeof name === "string" ? fast.get(name) : undefined
      if (fastDecode !== undefined) {
        // A known event without data decodes as an empty payload (heartbeat, connected).
        const event = fastDecode(flat ? parsed : parsed["data"] ?? emptyPayload)
        if (event !== undefined) return Either.right(event)
      }
    }
    if (!scanFirst && Json.exceedsDepth(text, maxDepth)) return tooDeep(text, maxDepth)
    if (parsed === notJson) return malformed(text, "not JSON")
    if (!Predicate.isRecord(parsed)) return malformed(text, "not a JSON object")
    const name = parsed[nameKey]
    if (typeof name !== "string" || name.length === 0) return malformed(text, `no "${nameKey}" naming the event`)
    let payload: unknown
    if (flat) {
      const { [nameKey]: _name, ...rest } = parsed
      payload = rest
    } else {
      payload = parsed["data"]
    }
    const decoded = SessionEvent.decodePayload(name, payload ?? {})
    if (Option.isNone(decoded)) {
      return strict
        ? Either.left(new UnknownEvent({ event: name, raw: truncateRaw(text) }))
        : Either.right({ _tag: "Unrecognized", event: name, payload })
    }
    return Either.mapLeft(
      decoded.value,
      (message) => new EventDecodeError({ event: name, raw: truncateRaw(text), message })
    )
  }
}

/**
 * Decodes one frame (builds a decoder each call: prefer {@link makeDecoder} on a hot path).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeFrame = (
  framing: Dialect.Framing,
  frame: string | Uint8Array,
  options?: DecodeOptions
): Either.Either<SessionEvent.SessionEvent, FrameError> => makeDecoder(framing, options)(frame)

/**
 * Encodes an event as a frame of the framing (the simulator sends with this).
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeEvent = (framing: Dialect.Framing, event: SessionEvent.SessionEvent): string => {
  const { event: name, payload } = SessionEvent.toWire(event)
  switch (framing) {
    case "event-data":
      return JSON.stringify({ event: name, data: payload })
    case "type-data":
      return JSON.stringify({ type: name, data: payload })
    case "flat":
      return JSON.stringify({ ...(Predicate.isRecord(payload) ? payload : { data: payload }), event: name })
  }
}

// ---------------------------------------------------------------------------
// Handshake (U08)
// ---------------------------------------------------------------------------

/**
 * The connection payload the document names: `{ apiKey, sessionId }`.
 *
 * @since 0.1.0
 * @category models
 */
export const HandshakeMessage = Schema.Struct({
  apiKey: Schema.String,
  sessionId: Schema.String
})

/**
 * The first message of the `message` handshake. It holds the key: never log it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handshakeMessage = (apiKey: Redacted.Redacted<string>, sessionId: string): string =>
  JSON.stringify({ apiKey: Redacted.value(apiKey), sessionId })

/**
 * The address of the event channel (or the SSE stream) for a session: the base, the path, and,
 * when the handshake goes in the query (U08), `sessionId` and `apiKey` parameters.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectUrl = (options: {
  readonly base: string
  readonly path: string
  readonly handshake: Dialect.Handshake
  readonly sessionId: string
  readonly apiKey: Redacted.Redacted<string>
}): string => {
  const url = new URL(joinPath(options.base, options.path))
  if (options.handshake !== "message") {
    url.searchParams.set("sessionId", options.sessionId)
    url.searchParams.set("apiKey", Redacted.value(options.apiKey))
  }
  return url.toString()
}

/**
 * Joins a base URL and a path without doubling or dropping the slash between them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const joinPath = (base: string, path: string): string =>
  `${base.endsWith("/") ? base.slice(0, -1) : base}${path.startsWith("/") ? path : `/${path}`}`

/**
 * An address with the value of every key-bearing query parameter (`apiKey`, `api_key`, `key`,
 * `token`) replaced by `<redacted>`: for logs, spans and errors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactUrl = (url: string): string =>
  url.replace(/([?&](?:apiKey|api_key|apikey|key|token|access_token)=)[^&#]*/gi, "$1<redacted>")

// ---------------------------------------------------------------------------
// Answers (U16)
// ---------------------------------------------------------------------------

/**
 * The payload of an answer frame (`external_resource_granted` sent by the client).
 *
 * @since 0.1.0
 * @category models
 */
export const AnswerData = Schema.Struct({
  granted: Schema.Boolean,
  resource_type: Schema.String,
  action_session_id: Schema.optional(Schema.String),
  field_name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type AnswerData = typeof AnswerData.Type

/**
 * The wire name of answer frames.
 *
 * @since 0.1.0
 * @category models
 */
export const answerEventName = "external_resource_granted"

/**
 * The payload of the answer to a request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerData = (request: SessionEvent.ExternalResourceRequested, answer: Answer.Answer): AnswerData => {
  const data: {
    granted: boolean
    resource_type: string
    action_session_id: string
    field_name?: string
    input?: string
  } = {
    granted: Answer.isGrant(answer),
    resource_type: SessionEvent.resourceTypeRaw(request.resource_type),
    action_session_id: request.action_session_id
  }
  if (Option.isSome(request.field_name)) data.field_name = request.field_name.value
  if (answer._tag === "Grant" && Option.isSome(answer.input)) data.input = answer.input.value
  return data
}

/**
 * The answer frame of a dialect: `{ event | type: "external_resource_granted", data }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeAnswer = (
  answerKey: Dialect.Dialect["answerKey"],
  request: SessionEvent.ExternalResourceRequested,
  answer: Answer.Answer
): string => JSON.stringify({ [answerKey]: answerEventName, data: answerData(request, answer) })

/**
 * What a client sends on the event channel, as the server reads it.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientFrame =
  | { readonly _tag: "Handshake"; readonly apiKey: string; readonly sessionId: string }
  | { readonly _tag: "Answer"; readonly data: AnswerData }

const decodeHandshake = Schema.decodeUnknownEither(HandshakeMessage)
const decodeAnswerData = Schema.decodeUnknownEither(AnswerData)

/**
 * The bounds of {@link decodeClientFrame}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientFrameOptions {
  /** The largest frame accepted, in UTF-8 bytes (default {@link defaultMaxClientFrameSize}). */
  readonly maxFrameSize?: number | undefined
  /** The deepest nesting accepted (default {@link defaultMaxDepth}). */
  readonly maxDepth?: number | undefined
}

/**
 * Decodes a frame a client sent (the simulator reads with this): the handshake message, or an
 * answer framed with `event` or `type`. Total for any input: a frame over the size bound is
 * `FrameTooLarge`, one nested deeper than the depth bound, not JSON, or of the wrong shape is
 * `MalformedFrame` (whose message never prints the value).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeClientFrame = (
  text: string,
  options: ClientFrameOptions = {}
): Either.Either<ClientFrame, MalformedFrame | FrameTooLarge> => {
  const limit = options.maxFrameSize ?? defaultMaxClientFrameSize
  if (text.length > limit) return Either.left(new FrameTooLarge({ size: text.length, limit }))
  if (text.length * 3 > limit) {
    const size = utf8Size(text)
    if (size > limit) return Either.left(new FrameTooLarge({ size, limit }))
  }
  const parsed = parseObject(text, options.maxDepth ?? defaultMaxDepth)
  if (parsed instanceof MalformedFrame) return Either.left(parsed)
  const name = parsed["event"] ?? parsed["type"]
  if (name === answerEventName) {
    return Either.match(decodeAnswerData(parsed["data"]), {
      onLeft: (error) => malformed(text, formatIssues(error)),
      onRight: (data) => Either.right({ _tag: "Answer", data })
    })
  }
  return Either.match(decodeHandshake(parsed), {
    onLeft: () => malformed(text, "neither a handshake nor an answer"),
    onRight: ({ apiKey, sessionId }) => Either.right({ _tag: "Handshake", apiKey, sessionId })
  })
}
