/**
 * The codecs a {@link Dialect.Dialect} selects: how server frames are decoded, how the
 * connection payload is delivered, and how answers are framed. Everything here is
 * synchronous and total: a frame gives an event or a typed error (a `Result`), never a thrown
 * exception. The frames are read by the protocol core's `Frame` reader; this module decodes their
 * payloads with Effect 4's `Schema` and builds the SDK's errors.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { Frame, Json } from "effect-agent-session-core"
import { Memo } from "effect-agent-session-shell"
import { AnswerData, type ClientFrame, type ClientFrameOptions, type DecodeOptions, HandshakeMessage } from "../binding/Wire.js"
import type * as Dialect from "./Dialect.js"
import { EventDecodeError, type FrameError, FrameTooLarge, MalformedFrame, truncateRaw, UnknownEvent } from "./Errors.js"
import { formatIssue } from "./internal/schema.js"
import * as SessionEvent from "./SessionEvent.js"

export * from "../binding/Wire.js"

/**
 * The deepest nesting of objects and arrays a frame may have by default: 64. The service's
 * payloads nest three or four levels; a deeper frame is refused (`MalformedFrame`) before
 * anything walks its value, so nothing that does later (formatters, `JSON.stringify`) can overflow
 * the stack, whatever a peer sends. A frame of up to 4,096 characters of a known event whose
 * fields are all strings (`action_run`, `thoughts_and_memories`, ...) keeps only those strings:
 * deeper properties beside them are dropped like any excess property.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxDepth: number = Json.defaultMaxDepth

/**
 * A frame decoder: one frame in, an event or a typed frame error out; `named` reads one
 * Server-Sent Event from its name and its data (as the `event-data` frame it stands for).
 *
 * @since 0.1.0
 * @category models
 */
export type FrameDecoder = Frame.FrameReader<Result.Result<SessionEvent.SessionEvent, FrameError>>

type Decoded = Result.Result<SessionEvent.SessionEvent, FrameError>

const isJson = Schema.is(Schema.Json)

const malformed = (text: string, message: string): Decoded =>
  Result.fail(new MalformedFrame({ raw: truncateRaw(text), message }))

const tooLarge = (size: number, limit: number): Decoded => Result.fail(new FrameTooLarge({ size, limit }))

/** A string field without checks nor transformation (a brand adds neither). */
const isPlainString = (ast: AST.AST): boolean =>
  AST.isString(ast) && ast.checks === undefined && ast.encoding === undefined && !AST.isOptional(ast)

/**
 * The events whose every field is a required plain string, by wire name, read from the union's
 * schemas (so nothing is written twice): the core's plain decoders give them without the schema
 * interpreter, which is a third of the per-frame cost.
 */
const plainEvents = (): ReadonlyArray<Frame.PlainEvent> => {
  const events: Array<Frame.PlainEvent> = []
  for (const member of SessionEvent.SessionEvent.members) {
    const ast = member.ast
    if (!AST.isObjects(ast) || ast.indexSignatures.length > 0 || ast.checks !== undefined) continue
    const event = Frame.plainEventOf(ast.propertySignatures, (ps) =>
      ps.name === "_tag" && AST.isLiteral(ps.type) && typeof ps.type.literal === "string"
        ? { tag: ps.type.literal }
        : typeof ps.name === "string" && isPlainString(ps.type)
        ? { field: ps.name }
        : undefined)
    if (event !== undefined) events.push(event)
  }
  return events
}

/** The plain decoders of each framing, built once per framing (not per connection). */
const plainDecodersOf = Memo.bounded<ReadonlyMap<string, (payload: unknown) => Decoded | undefined>>(
  Number.POSITIVE_INFINITY
)

/** The core copies exactly the fields of the event's schema, with its tag. */
const plainEvent = (event: Record<string, unknown>): Decoded => Result.succeed(event as unknown as SessionEvent.SessionEvent)

/**
 * Builds the frame decoder of a framing. Decoding is synchronous: it never allocates an Effect.
 *
 * @example
 * ```ts
 * import { Wire } from "effect-agent-session-effect4"
 * import * as Result from "effect/Result"
 *
 * const decode = Wire.makeDecoder("event-data")
 * const decoded = decode(`{"event":"action_run","data":{"name":"click","action_session_id":"a","content":"OK"}}`)
 * Result.isSuccess(decoded) // true
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDecoder = (framing: Dialect.Framing, options: DecodeOptions = {}): FrameDecoder => {
  const strict = options.strict === true
  return Frame.makeFrameReader<Decoded>(framing, options, {
    plain: plainDecodersOf(framing, () => Frame.plainDecoders(framing, plainEvents(), plainEvent)),
    tooLarge,
    malformed,
    event: (name, payload, text) => {
      const decoded = SessionEvent.decodePayload(name, payload ?? {})
      if (Option.isNone(decoded)) {
        return strict
          ? Result.fail(new UnknownEvent({ event: name, raw: truncateRaw(text) }))
          // Parsed by `JSON.parse` (and within the depth bound): JSON; no payload is `null`.
          : Result.succeed({ _tag: "Unrecognized", event: name, payload: isJson(payload) ? payload : null })
      }
      return Result.mapError(
        decoded.value,
        (message) => new EventDecodeError({ event: name, raw: truncateRaw(text), message })
      )
    }
  })
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
): Result.Result<SessionEvent.SessionEvent, FrameError> => makeDecoder(framing, options)(frame)

const decodeHandshake = Schema.decodeUnknownResult(HandshakeMessage, { onExcessProperty: "ignore" })
const decodeAnswerData = Schema.decodeUnknownResult(AnswerData, { onExcessProperty: "ignore" })

/**
 * Decodes a frame a client sent: the handshake message, or an answer framed with `event` or
 * `type`. Total for any input: a frame over the size bound is `FrameTooLarge`, one nested deeper
 * than the depth bound, not JSON, or of the wrong shape is `MalformedFrame` (whose message never
 * prints the value).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeClientFrame = (
  text: string,
  options: ClientFrameOptions = {}
): Result.Result<ClientFrame, MalformedFrame | FrameTooLarge> => {
  const read = Frame.readClientFrame(text, options)
  switch (read._tag) {
    case "TooLarge":
      return Result.fail(new FrameTooLarge({ size: read.size, limit: read.limit }))
    case "Malformed":
      return Result.fail(new MalformedFrame({ raw: truncateRaw(text), message: read.message }))
    case "Answer": {
      const data = decodeAnswerData(read.data)
      return Result.isSuccess(data)
        ? Result.succeed({ _tag: "Answer", data: data.success })
        : Result.fail(new MalformedFrame({ raw: truncateRaw(text), message: formatIssue(data.failure.issue) }))
    }
    case "Handshake": {
      const handshake = decodeHandshake(read.value)
      return Result.isSuccess(handshake)
        ? Result.succeed({ _tag: "Handshake", apiKey: handshake.success.apiKey, sessionId: handshake.success.sessionId })
        : Result.fail(new MalformedFrame({ raw: truncateRaw(text), message: Frame.NEITHER_HANDSHAKE_NOR_ANSWER }))
    }
  }
}
