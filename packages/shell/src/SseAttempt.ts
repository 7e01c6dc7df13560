/**
 * One Server-Sent Events attempt of the event channel, everything but its I/O: the stream's
 * query, how the `GET` failing, being refused or its body ending ends the attempt, the body's
 * bytes decoded and parsed into named events handed to the attempt's hooks, and what an answer's
 * `POST` came to. The edition runs the requests and reads the body (its HTTP client, its
 * time-outs, its fibers) and asks the attempt at each step.
 *
 * @since 0.1.0
 */
import { Close, Http, Secrets, Sse, Url, type Connection, type Dialect, type Frame } from "effect-agent-session-core"
import type { Outcomes, Settings } from "./Outcomes.js"

/**
 * What the attempt calls of the engine (the edition's `Hooks` fit): the key, `open` once the
 * stream answered, `namedEvent` per event, `tooLarge` per event over the bound, `alive` per piece
 * of the body (a comment is no event, but the connection is not idle).
 *
 * @since 0.1.0
 * @category models
 */
export interface Hooks<K> {
  readonly key: K
  readonly open: () => void
  readonly namedEvent: (name: string, data: string) => void
  readonly tooLarge: (size: number) => void
  readonly alive: () => void
}

/**
 * The error an edition's connect time-out fails the stream's `GET` with, for
 * {@link SseAttempt.openFailed} to tell it from a failure of the request.
 *
 * @since 0.1.0
 * @category models
 */
export const TIMED_OUT: unique symbol = Symbol.for("effect-agent-session-shell/SseAttempt/TimedOut")

/**
 * A request of an SSE attempt, as the edition's HTTP client sends it: the method, the URL without
 * its query, the query (the session and the key in clear, kept apart from `url` so that a message
 * printing the URL never prints the key), the headers, and the JSON body of an answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly params: { readonly sessionId: string; readonly apiKey: string }
  readonly headers: Readonly<Record<string, string>>
  readonly body: { readonly text: string; readonly contentType: string } | undefined
}

/**
 * The requests of one attempt ({@link SseAttempt.requests}): the stream's `GET`, each answer's
 * `POST`, and the line logged on connecting (the key `<redacted>`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Requests {
  readonly stream: Request
  readonly answer: (data: Frame.AnswerData) => Request
  readonly connecting: string
}

/**
 * The stream's address as errors and the connection print it: `{base}{connectPath}`, no
 * credentials, query or fragment.
 *
 * @since 0.1.0
 * @category constructors
 */
export const printableStreamUrl = (base: string, paths: Dialect.Dialect["sse"]): string =>
  Url.printableUrl(Url.joinPath(base, paths.connectPath))

/**
 * One SSE attempt. Its steps, in order: {@link SseAttempt.params} for the requests; the `GET`
 * failed ({@link SseAttempt.openFailed}) or answered with an error status
 * ({@link SseAttempt.refused}), else {@link SseAttempt.open}; each piece of the body
 * ({@link SseAttempt.read}) while the edition reads it; then {@link SseAttempt.readFailed} or
 * {@link SseAttempt.streamEnded}. Answers: {@link SseAttempt.answered} and
 * {@link SseAttempt.answerFailed}.
 *
 * @since 0.1.0
 * @category models
 */
export class SseAttempt<K, O, S extends Settings> implements Sse.SseHandler {
  private decoder: TextDecoder | undefined = undefined
  private parser: Sse.SseParser | undefined = undefined

  constructor(
    readonly hooks: Hooks<K>,
    readonly outcomes: Outcomes<K, O, S>,
    readonly settings: S
  ) {}

  /**
   * The query of the stream's `GET` and of every answer's `POST` (the key travels as a parameter,
   * apart from the request's URL, so that an error that prints the URL never prints the key).
   */
  params(sessionId: string): { readonly sessionId: string; readonly apiKey: string } {
    return Sse.streamParams(sessionId, this.outcomes.reveal(this.hooks.key))
  }

  /**
   * The attempt's requests to `base` on the dialect's paths: the stream's `GET
   * {connectPath}?sessionId&apiKey` (asking for `text/event-stream`, uncached), each answer's
   * `POST {egressPath}?sessionId&apiKey` with `{ event: "external_resource_granted", data }`. The
   * key is read once, for the attempt.
   */
  requests(base: string, paths: Dialect.Dialect["sse"], sessionId: string): Requests {
    const params = this.params(sessionId)
    const url = Url.joinPath(base, paths.connectPath)
    const egress = Url.joinPath(base, paths.egressPath)
    return {
      stream: { method: "GET", url, params, headers: Sse.streamHeaders, body: undefined },
      answer: (data) => ({
        method: "POST",
        url: egress,
        params,
        headers: {},
        body: { text: Sse.answerBody(data), contentType: "application/json" }
      }),
      connecting: `Connecting to ${Sse.printableStreamUrl(url, sessionId)}`
    }
  }

  /** The stream's `GET` failed ({@link TIMED_OUT}: it did not answer within the connect time-out). */
  openFailed(cause: unknown): O {
    const { hooks, outcomes } = this
    return cause === TIMED_OUT
      ? outcomes.timedOut(this.settings)
      : outcomes.retry(Close.openFailed(cause, outcomes.reveal(hooks.key)))
  }

  /**
   * The stream's `GET` answered with an error status: a refusal (400, 401, 403, 404, 410) ends the
   * connection, any other status is retried. `body` is the start of the answer's body
   * (`Sse.REFUSAL_READ_LIMIT` bytes at most), its text kept scrubbed of the key.
   */
  refused(status: number, body: Uint8Array): O {
    const { hooks, outcomes } = this
    const refusal = Sse.streamRefusal(status, body, outcomes.reveal(hooks.key))
    return refusal._tag === "Rejected"
      ? outcomes.rejected(refusal.code, refusal.reason)
      : outcomes.retry(refusal.message)
  }

  /** The stream answered: the connection is open, its body is read next. */
  open(): void {
    this.decoder = new TextDecoder()
    this.parser = new Sse.SseParser(this, this.settings.maxFrameSize)
    this.hooks.open()
  }

  /** Pieces of the body, in order: each keeps the connection alive, and is parsed into events. */
  read(chunk: Iterable<Uint8Array>): void {
    const { decoder, hooks, parser } = this
    if (decoder === undefined || parser === undefined) return
    for (const bytes of chunk) {
      hooks.alive()
      parser.feed(decoder.decode(bytes, { stream: true }))
    }
  }

  /** Reading the body failed. */
  readFailed(cause: unknown): O {
    return this.outcomes.retry(Close.readFailed(cause, this.outcomes.reveal(this.hooks.key)))
  }

  /** The body ended before `complete`: the stream is reopened, as an EventSource would. */
  streamEnded(): O {
    return this.outcomes.retry(Close.STREAM_ENDED)
  }

  /** What an answer's `POST` came to, by its status: confirmed, or why not (`Http.answerPostOutcome`). */
  answered(status: number): "confirmed" | Connection.WriteFailure {
    const outcome = Http.answerPostOutcome(status)
    return outcome === "confirmed" ? outcome : { retry: outcome === "retry", message: `HTTP ${status}` }
  }

  /** An answer's `POST` failed (or timed out): kept queued, and the connection reopened. */
  answerFailed(cause: unknown): Connection.WriteFailure {
    return {
      retry: true,
      message: Secrets.scrubChannelText(Close.describeCause(cause), this.outcomes.reveal(this.hooks.key))
    }
  }

  /** The parser's event: one named event, to the engine. */
  event(name: string, data: string): void {
    this.hooks.namedEvent(name, data)
  }

  /** The parser's event over the bound: to the engine. */
  tooLarge(size: number): void {
    this.hooks.tooLarge(size)
  }
}
