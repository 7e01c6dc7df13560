/**
 * The Server-Sent Events transport of the event channel (the observed client's second transport):
 * `GET {base}{dialect.sse.connectPath}?sessionId&apiKey` read as named SSE events, answers by
 * `POST {base}{dialect.sse.egressPath}?sessionId&apiKey`. The engine (`eventStream.ts`) gives it
 * the same reconnect, idle time-out, bounded buffer and answer guarantees as the WebSocket.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Http, Sse } from "effect-agent-session-core"
import { SseAttempt } from "effect-agent-session-core/shell"
import * as Credentials from "../Credentials.js"
import * as Dialect from "../Dialect.js"
import type { InsecureTransport } from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import type * as Wire from "../Wire.js"
import * as Deadlines from "../../binding/internal/channel/deadlines.js"
import { type Engine, makeEngine } from "./channel/engine.js"
import { resolveSettings, type Settings } from "../../binding/internal/channel/settings.js"
import { tapTransport } from "./channel/tap.js"
import { outcomes } from "../../binding/internal/channel/outcomes.js"
import { type AttemptOutcome, fromExit, type Hooks, type Io, type SendFailure, type Transport } from "./channel/transport.js"
import { checkAddress, serviceOf, type ServiceOptions } from "./eventStream.js"
import { readBounded } from "../../binding/internal/body.js"

// ---------------------------------------------------------------------------
// The transport
// ---------------------------------------------------------------------------

const confirmed = Effect.succeed("confirmed" as const)

/** A request of the attempt (`SseAttempt.Request`) for the HTTP client. */
const toRequest = ({ body, headers, method, params, url }: SseAttempt.Request): HttpClientRequest.HttpClientRequest =>
  HttpClientRequest.make(method)(url, {
    urlParams: params,
    headers,
    body: body === undefined ? undefined : HttpBody.text(body.text, body.contentType)
  })

interface SseOptions {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly sessionId: string
  readonly settings: Settings
  readonly client: HttpClient.HttpClient
}

/**
 * The SSE transport: one `GET` per attempt; answers `POST`ed to the egress path. The response
 * body is read by a fiber of the attempt (the platform's HTTP client gives it as a `Stream`).
 */
export const sseTransport = (options: SseOptions): Transport => (hooks) =>
  Effect.asVoid(Effect.forkScoped(
    attempt(options, hooks).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.sync(() => {
          // Interrupted: the engine closed the attempt; it knows how it ended.
          if (!(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause))) hooks.end(fromExit(exit))
        })
      )
    )
  ))

const attempt = (options: SseOptions, hooks: Hooks): Effect.Effect<AttemptOutcome, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const sse = new SseAttempt.SseAttempt(hooks, outcomes, settings)
    // The key travels as a URL parameter (kept apart from `request.url`, so error messages
    // never print it), and the platform's span, which records the full URL, is off.
    const client = options.client.pipe(HttpClient.withTracerDisabledWhen(() => true))
    const latch = yield* Effect.makeLatch(true)

    const requests = sse.requests(options.base, dialect.sse, sessionId)
    const post = (data: Wire.AnswerData) =>
      client.execute(toRequest(requests.answer(data))).pipe(
        // The response's body is not wanted: released (not read) at once.
        Effect.tap((response) => Stream.runDrain(Stream.take(response.stream, 0)).pipe(Effect.ignore)),
        Effect.timeoutFail({
          duration: settings.answerTimeout,
          onTimeout: () => Sse.answerTimedOut(Duration.toMillis(settings.answerTimeout))
        })
      )

    const send = (_frame: string, data: Wire.AnswerData): Effect.Effect<"confirmed", SendFailure> =>
      // The `POST` runs in a fiber of its own, interruptible, which only its own time-out ends:
      // the engine's write (uninterruptible, so an answer in flight is never abandoned half-way
      // and sent twice) waits for it, and so `close` and scope exit wait at most `answerTimeout`
      // whatever the service does.
      Effect.forkDaemon(Effect.interruptible(post(data))).pipe(
        Effect.flatMap(Fiber.join),
        Effect.mapError((error) => sse.answerFailed(error)),
        Effect.flatMap((response) => {
          const outcome = sse.answered(response.status)
          return outcome === "confirmed" ? confirmed : Effect.fail(outcome)
        })
      )

    const io: Io = {
      send,
      pause: () => latch.unsafeClose(),
      resume: () => latch.unsafeOpen(),
      abort: () => {}
    }
    hooks.attach(io)

    yield* Effect.logDebug(requests.connecting)
    const opened = yield* client.execute(toRequest(requests.stream)).pipe(
      Effect.timeoutFail({ duration: settings.connectTimeout, onTimeout: () => SseAttempt.TIMED_OUT }),
      Effect.either
    )
    if (Either.isLeft(opened)) return sse.openFailed(opened.left)
    const response = opened.right
    if (!Http.isSuccess(response.status)) {
      // At most 4 KiB of a refusal is kept: no more is read (a hostile body may never end).
      const bytes = yield* readBounded(response, Sse.REFUSAL_READ_LIMIT).pipe(
        Effect.timeout(settings.connectTimeout),
        Effect.orElseSucceed(() => new Uint8Array(0))
      )
      return sse.refused(response.status, bytes)
    }
    sse.open()

    const read = response.stream.pipe(
      Stream.runForEachChunk((chunk) => Effect.zipRight(latch.await, Effect.sync(() => sse.read(chunk))))
    )
    const ended = yield* Effect.either(read)
    return Either.isLeft(ended) ? sse.readFailed(ended.left) : sse.streamEnded()
  })

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/** Opens an SSE connection's engine (the service's `connect`, with the internals tests observe). */
export const connectEngine = (
  options: ServiceOptions,
  sessionId: string,
  connectOptions: EventStream.ConnectOptions = {},
  deadlines?: Deadlines.Deadlines
): Effect.Effect<
  Engine,
  InsecureTransport,
  Scope.Scope | Credentials.Credentials | HttpClient.HttpClient
> =>
  Effect.gen(function*() {
    const base = yield* checkAddress(options.url, options.allowInsecure)
    const client = yield* HttpClient.HttpClient
    const dialect = options.dialect ?? Dialect.observed
    const settings = resolveSettings(options, connectOptions, dialect)
    return yield* makeEngine({
      sessionId,
      settings,
      dialect,
      agent: connectOptions.agent,
      printableUrl: SseAttempt.printableStreamUrl(base, dialect.sse),
      framing: "event-data",
      transport: yield* tapTransport(sseTransport({ base, dialect, sessionId, settings, client }), {
        sessionId,
        dialect,
        transport: "sse"
      }),
      deadlines
    })
  })

/** The SSE service. */
export const make = (
  options: ServiceOptions
): Effect.Effect<EventStream.Service, never, Credentials.Credentials | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const context = Context.make(Credentials.Credentials, yield* Credentials.Credentials).pipe(
      Context.add(HttpClient.HttpClient, yield* HttpClient.HttpClient)
    )
    const deadlines = Deadlines.make()
    return serviceOf(
      context,
      (sessionId, connectOptions) => connectEngine(options, sessionId, connectOptions, deadlines)
    )
  })
