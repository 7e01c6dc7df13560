/**
 * The codecs a dialect selects: how the connection payload is delivered, how answers are framed,
 * how an event is framed for sending.
 *
 * The declarations of the public module `Wire` written once for both editions: each edition's
 * `src/Wire.ts` is its entry point, re-exports them, and adds the frame decoders, which give the
 * edition's own success-or-failure value.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Frame, Secrets, Url } from "effect-agent-session-core"
import * as Answer from "../src/Answer.js"
import type * as Dialect from "../src/Dialect.js"
import * as SessionEvent from "../src/SessionEvent.js"

/**
 * The largest frame accepted by default: 1 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxFrameSize: number = Frame.defaultMaxFrameSize

/**
 * The largest frame a client may send on the event channel by default (handshakes and answers
 * are small): 64 KiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxClientFrameSize: number = Frame.defaultMaxClientFrameSize

/**
 * Options of frame decoding: the bounds of the core's frame reader (`maxFrameSize`, default
 * 1 MiB; `maxDepth`, default {@link defaultMaxDepth}), and `strict`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions extends Frame.ReadOptions {
  /** Unknown event names fail with `UnknownEvent` instead of giving `Unrecognized`. */
  readonly strict?: boolean | undefined
}

/**
 * Encodes an event as a frame of the framing (the simulator sends with this).
 *
 * @since 0.1.0
 * @category constructors
 */
export const encodeEvent = (framing: Dialect.Framing, event: SessionEvent.SessionEvent): string => {
  const { event: name, payload } = SessionEvent.toWire(event)
  return Frame.encodeFrame(framing, name, payload)
}

// ---------------------------------------------------------------------------
// Handshake
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
  Frame.handshakeMessage(Redacted.value(apiKey), sessionId)

/**
 * The address of the event channel (or the SSE stream) for a session: the base, the path, and,
 * when the handshake goes in the query, `sessionId` and `apiKey` parameters.
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
}): string => Url.connectUrl({ ...options, apiKey: Redacted.value(options.apiKey) })

/**
 * Joins a base URL and a path without doubling or dropping the slash between them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const joinPath: (base: string, path: string) => string = Url.joinPath

/**
 * An address with the value of every key-bearing query parameter (`apiKey`, `api_key`, `key`,
 * `token`) replaced by `<redacted>`: for logs, spans and errors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactUrl: (url: string) => string = Secrets.redactUrl

// ---------------------------------------------------------------------------
// Answers
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
export const answerEventName: typeof Frame.answerEventName = Frame.answerEventName

/**
 * The payload of the answer to a request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerData = (request: SessionEvent.ExternalResourceRequested, answer: Answer.Answer): AnswerData =>
  Frame.answerData({
    granted: Answer.isGrant(answer),
    resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
    actionSessionId: request.action_session_id,
    fieldName: Option.getOrUndefined(request.field_name),
    input: answer._tag === "Grant" ? Option.getOrUndefined(answer.input) : undefined
  })

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
): string => Frame.encodeAnswer(answerKey, answerData(request, answer))

/**
 * What a client sends on the event channel, as the server reads it.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientFrame =
  | { readonly _tag: "Handshake"; readonly apiKey: string; readonly sessionId: string }
  | { readonly _tag: "Answer"; readonly data: AnswerData }

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
