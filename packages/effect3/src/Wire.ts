/**
 * The codecs a {@link Dialect.Dialect} selects: how server frames are decoded, how the
 * connection payload is delivered, and how answers are framed. Everything here is
 * synchronous and total: a frame gives an event or a typed error, never a thrown exception.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { AnswerData, type ClientFrame, type ClientFrameOptions, type DecodeOptions, HandshakeMessage } from "../binding/Wire.js"
import type * as Dialect from "./Dialect.js"
import { EventDecodeError, type FrameError, FrameTooLarge, MalformedFrame, truncateRaw, UnknownEvent } from "./Errors.js"
import { formatIssues } from "./internal/schema.js"
import * as SessionEvent from "./SessionEvent.js"
import { Frame, Json } from "effect-agent-session-core"
import { Memo } from "effect-agent-session-shell"

export * from "../binding/Wire.js"

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
 * A frame decoder: one frame in, an event or a typed frame error out; `named` reads one
 * Server-Sent Event from its name and its data (as the `event-data` frame it stands for).
 *
 * @since 0.1.0
 * @category models
 */
export type FrameDecoder = Frame.FrameReader<Either.Either<SessionEvent.SessionEvent, FrameError>>

type Decoded = Either.Either<SessionEvent.SessionEvent, FrameError>

const malformed = (text: string, message: string): Decoded =>
  Either.left(new MalformedFrame({ raw: truncateRaw(text), message }))

const tooLarge = (size: number, limit: number): Decoded => Either.left(new FrameTooLarge({ size, limit }))

/**
 * The events whose every field is a required string (plain or branded: a brand adds no check), by
 * wire name, read from the union's schemas (so nothing is written twice): the core's plain
 * decoders give them without the schema interpreter, which is a third of the per-frame cost.
 */
const plainEvents = (): ReadonlyArray<Frame.PlainEvent> => {
  const events: Array<Frame.PlainEvent> = []
  for (const member of SessionEvent.SessionEvent.members) {
    const ast = member.ast
    if (!AST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) continue
    const event = Frame.plainEventOf(ast.propertySignatures, (ps) =>
      ps.name === "_tag" && AST.isLiteral(ps.type) && typeof ps.type.literal === "string"
        ? { tag: ps.type.literal }
        : typeof ps.name === "string" && !ps.isOptional && AST.isStringKeyword(ps.type)
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
const plainEvent = (event: Record<string, unknown>): Decoded => Either.right(event as unknown as SessionEvent.SessionEvent)

/**
 * Builds the frame decoder of a framing. Decoding is synchronous: it never allocates an Effect.
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
          ? Either.left(new UnknownEvent({ event: name, raw: truncateRaw(text) }))
          : Either.right({ _tag: "Unrecognized", event: name, payload })
      }
      return Either.mapLeft(
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
): Either.Either<SessionEvent.SessionEvent, FrameError> => makeDecoder(framing, options)(frame)

const decodeHandshake = Schema.decodeUnknownEither(HandshakeMessage)
const decodeAnswerData = Schema.decodeUnknownEither(AnswerData)

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
  const read = Frame.readClientFrame(text, options)
  switch (read._tag) {
    case "TooLarge":
      return Either.left(new FrameTooLarge({ size: read.size, limit: read.limit }))
    case "Malformed":
      return Either.left(new MalformedFrame({ raw: truncateRaw(text), message: read.message }))
    case "Answer":
      return Either.match(decodeAnswerData(read.data), {
        onLeft: (error) => Either.left(new MalformedFrame({ raw: truncateRaw(text), message: formatIssues(error) })),
        onRight: (data) => Either.right({ _tag: "Answer", data })
      })
    case "Handshake":
      return Either.match(decodeHandshake(read.value), {
        onLeft: () => Either.left(new MalformedFrame({ raw: truncateRaw(text), message: Frame.NEITHER_HANDSHAKE_NOR_ANSWER })),
        onRight: ({ apiKey, sessionId }) => Either.right({ _tag: "Handshake", apiKey, sessionId })
      })
  }
}
