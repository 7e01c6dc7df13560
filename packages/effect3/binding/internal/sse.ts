/**
 * The Server-Sent Events transport of the event channel (the observed client's second transport):
 * `GET {base}{dialect.sse.connectPath}?sessionId&apiKey` read as named SSE events, answers by
 * `POST {base}{dialect.sse.egressPath}?sessionId&apiKey`. The engine (`eventStream.ts`) gives it
 * the same reconnect, idle time-out, bounded buffer and answer guarantees as the WebSocket.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { Http, Sse } from "effect-agent-session-core"
import { SseAttempt } from "effect-agent-session-shell"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { InsecureTransport } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import type * as Wire from "../../src/Wire.js"
import { type Engine, makeEngineWith } from "./channel/engine.js"
import { resolveSettings, type Settings } from "./channel/settings.js"
import { tapTransport } from "../../src/internal/channel/tap.js"
import {
  type AttemptOutcome,
  forkAttempt,
  fromExit,
  type Hooks,
  type Io,
  type SendFailure,
  type Transport
} from "./channel/transport.js"
import { checkAddress, serviceOf, type ServiceOptions } from "./eventStream.js"
import {
  closeLatchUnsafe,
  forkDaemon,
  HttpBody,
  HttpClient,
  HttpClientRequest,
  isInterruptedOnly,
  makeLatch,
  openLatchUnsafe,
  releaseUnread,
  runForEachBatch,
  timeoutFail,
  untracedClient
} from "../../src/internal/line.js"
import { readBounded } from "./body.js"
import * as Deadlines from "./channel/deadlines.js"
import { outcomes } from "./channel/outcomes.js"

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
 * body is read by a fiber of the attempt (the platform's HTTP client gives it as a `Stream`),
 * which lasts as long as the attempt.
 */
export const sseTransport = (options: SseOptions): Transport => (hooks) =>
  forkAttempt(
    hooks,
    attempt(options, hooks).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.sync(() => {
          // Interrupted: the engine closed the attempt; it knows how it ended.
          if (!(Exit.isFailure(exit) && isInterruptedOnly(exit.cause))) hooks.end(fromExit(exit))
        })
      )
    )
  )

const attempt = (options: SseOptions, hooks: Hooks): Effect.Effect<AttemptOutcome, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { dialect, sessionId, settings } = options
    const sse = new SseAttempt.SseAttempt(hooks, outcomes, settings)
    // The key travels as a URL parameter (kept apart from `request.url`, so error messages
    // never print it), and the platform's span, which records the full URL, is off.
    const client = untracedClient(options.client)
    const latch = yield* makeLatch(true)

    const requests = sse.requests(options.base, dialect.sse, sessionId)
    const post = (data: Wire.AnswerData) =>
      client.execute(toRequest(requests.answer(data))).pipe(
        // The response's body is not wanted: released in a fiber of its own, so that a body the
        // service holds open neither delays the answer's confirmation nor keeps the connection
        // (bounded by the answer time-out, after which the body is closed unread).
        Effect.tap((response) =>
          forkDaemon(releaseUnread(response.stream).pipe(Effect.timeout(settings.answerTimeout), Effect.ignore))
        ),
        timeoutFail({
          duration: settings.answerTimeout,
          onTimeout: () => Sse.answerTimedOut(Duration.toMillis(settings.answerTimeout))
        })
      )

    const send = (_frame: string, data: Wire.AnswerData): Effect.Effect<"confirmed", SendFailure> =>
      // The `POST` runs in a fiber of its own, interruptible, which only its own time-out ends:
      // the engine's write (uninterruptible, so an answer in flight is never abandoned half-way
      // and sent twice) waits for it, and so `close` and scope exit wait at most `answerTimeout`
      // whatever the service does.
      forkDaemon(Effect.interruptible(post(data))).pipe(
        Effect.flatMap(Fiber.join),
        Effect.mapError((error) => sse.answerFailed(error)),
        Effect.flatMap((response) => {
          const outcome = sse.answered(response.status)
          return outcome === "confirmed" ? confirmed : Effect.fail(outcome)
        })
      )

    const io: Io = {
      send,
      pause: () => closeLatchUnsafe(latch),
      resume: () => openLatchUnsafe(latch),
      abort: () => {}
    }
    hooks.attach(io)

    yield* Effect.logDebug(requests.connecting)
    return yield* client.execute(toRequest(requests.stream)).pipe(
      timeoutFail({ duration: settings.connectTimeout, onTimeout: () => SseAttempt.TIMED_OUT }),
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(sse.openFailed(error)),
        onSuccess: (response) => {
          if (!Http.isSuccess(response.status)) {
            // At most 4 KiB of a refusal is kept: no more is read (a hostile body may never end).
            // A body that does not come within the connect time-out is taken as empty: the
            // status alone says what the refusal is.
            return readBounded(response, Sse.REFUSAL_READ_LIMIT).pipe(
              Effect.timeout(settings.connectTimeout),
              Effect.orElseSucceed(() => new Uint8Array(0)),
              Effect.map((bytes) => sse.refused(response.status, bytes))
            )
          }
          sse.open()
          return response.stream.pipe(
            runForEachBatch((chunk) => Effect.flatMap(latch.await, () => Effect.sync(() => sse.read(chunk)))),
            Effect.match({ onFailure: (error) => sse.readFailed(error), onSuccess: () => sse.streamEnded() })
          )
        }
      })
    )
  })

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/** The services an SSE connection is made with (captured when the service is made). */
interface SseServices {
  readonly credentials: Credentials.Service
  readonly client: HttpClient.HttpClient
}

/** Opens an SSE connection's engine with the services given (the service's `connect`). */
const openEngine = (
  options: ServiceOptions,
  services: SseServices,
  sessionId: string,
  connectOptions: EventStream.ConnectOptions = {},
  deadlines?: Deadlines.Deadlines
): Effect.Effect<Engine, InsecureTransport, Scope.Scope> =>
  Effect.flatMap(checkAddress(options.url, options.allowInsecure), (base) => {
    const dialect = options.dialect ?? Dialect.observed
    const settings = resolveSettings(options, connectOptions, dialect)
    const { client } = services
    // A recorder, if the edition has one, sees the connection here (`tap.ts`).
    return Effect.flatMap(
      tapTransport(sseTransport({ base, dialect, sessionId, settings, client }), { sessionId, dialect, transport: "sse" }),
      (transport) =>
        makeEngineWith(services.credentials, {
          sessionId,
          settings,
          dialect,
          agent: connectOptions.agent,
          printableUrl: SseAttempt.printableStreamUrl(base, dialect.sse),
          framing: "event-data",
          transport,
          deadlines
        })
    )
  })

/** {@link openEngine} with the services of the context (the internals tests observe). */
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
    const services = { credentials: yield* Credentials.Credentials, client: yield* HttpClient.HttpClient }
    return yield* openEngine(options, services, sessionId, connectOptions, deadlines)
  })

/** The SSE service. */
export const make = (
  options: ServiceOptions
): Effect.Effect<EventStream.Service, never, Credentials.Credentials | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const services: SseServices = { credentials: yield* Credentials.Credentials, client: yield* HttpClient.HttpClient }
    const deadlines = Deadlines.make()
    return serviceOf((sessionId, connectOptions) => openEngine(options, services, sessionId, connectOptions, deadlines))
  })
