/**
 * Shared pieces of the reliability suite: the SDK wired to a simulator (optionally with a
 * WebSocket constructor that counts attempts), a session watcher that records everything a caller
 * sees, a raw `ws` server for what the simulator does not expose (close codes), and comparisons
 * of event lists through their wire encoding.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Socket from "@effect/platform/Socket"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Vm from "node:vm"
import * as V8 from "node:v8"
import type { IncomingMessage } from "node:http"
import { type WebSocket, WebSocketServer } from "ws"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import * as Credentials from "../../src/Credentials.js"
import type { AgentSessionError, RespondError } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import * as WebSocketCtor from "../../src/internal/webSocket.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Script from "effect-agent-session-simulator/Script"
import type * as Simulator from "effect-agent-session-simulator/Simulator"
import * as Wire from "../../src/Wire.js"

export { sessionInfo } from "../helpers/sdk.js"

/** A session request the simulator accepts. */
export const request = (maxActions = 10, goal = "find the pricing page"): Session.CreateSessionInput => ({
  start_url: "https://example.com/",
  max_actions: maxActions,
  goal
})

/** A quick reconnect schedule for tests: every 20 ms, at most 6 retries. */
export const quickReconnect: Schedule.Schedule<unknown, EventStream.AttemptError> = Schedule.spaced("20 millis").pipe(
  Schedule.intersect(Schedule.recurs(6))
)

/** The options of the SDK layer besides where the simulator is. */
export type SdkOptions = Partial<NodeAgentSessions.Options>

/** The whole SDK (`NodeAgentSessions.layer`) pointed at a simulator. */
export const sdkLayer = (sim: Simulator.Service, options: SdkOptions = {}) =>
  NodeAgentSessions.layer({
    apiKey: sim.accountKey,
    baseUrl: sim.baseUrl,
    wsUrl: sim.wsUrl,
    dialect: sim.dialect,
    ...options
  }).pipe(Layer.orDie)

/** Counts the WebSocket attempts made through it. */
export interface AttemptCounter {
  count: number
}

/**
 * The same wiring as `NodeAgentSessions.layer`, with a WebSocket constructor that counts every
 * socket the SDK opens (so a test can prove an attempt was not retried).
 */
export const countingSdkLayer = (
  sim: Simulator.Service,
  counter: AttemptCounter,
  options: {
    readonly apiKey?: string
    readonly events?: Omit<EventStream.Options, "url" | "dialect" | "allowInsecure">
    readonly http?: Omit<AgentApi.Options, "baseUrl" | "dialect" | "allowInsecure">
  } = {}
) => {
  const make = WebSocketCtor.make({})
  const constructor = Layer.succeed(Socket.WebSocketConstructor, (url: string, protocols?: string | Array<string>) => {
    counter.count += 1
    return make(url, protocols)
  })
  const api = AgentApi.layer({ ...options.http, baseUrl: sim.baseUrl, dialect: sim.dialect }).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const events = EventStream.layer({ ...options.events, url: sim.wsUrl, dialect: sim.dialect }).pipe(
    Layer.provide(constructor)
  )
  return Layer.provideMerge(AgentSessions.layer, Layer.merge(api, events)).pipe(
    Layer.provideMerge(Credentials.layer({ apiKey: options.apiKey ?? sim.accountKey })),
    Layer.orDie
  )
}

/** Everything a caller saw of one session. */
export interface Watched {
  readonly sessionId: Session.SessionId
  /** The events, in the order `events` delivered them. */
  readonly events: ReadonlyArray<SessionEvent.SessionEvent>
  /** How consuming `events` ended. */
  readonly exit: Exit.Exit<void, AgentSessionError | RespondError>
  /** `RunningSession.outcome`. */
  readonly outcome: Exit.Exit<AgentSessions.Outcome, AgentSessionError>
  /** Every state the connection went through, in order. */
  readonly states: ReadonlyArray<EventStream.ConnectionState>
  /** The state at the end. */
  readonly finalState: EventStream.ConnectionState
}

/** Options of {@link watch}. */
export interface WatchOptions extends AgentSessions.StartOptions {
  /** The answer to every request (default: grant). */
  readonly answer?: Answer.Answer | undefined
  /** Called with every event before it is answered; may delay or observe. */
  readonly onEvent?: (event: SessionEvent.SessionEvent, running: AgentSessions.RunningSession) => Effect.Effect<void>
}

/** Records every state a connection goes through (from the current one on). */
export const recordStates = (state: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState>) =>
  Effect.gen(function*() {
    const states: Array<EventStream.ConnectionState> = []
    const fiber = yield* Stream.runForEach(state.changes, (s) => Effect.sync(() => states.push(s))).pipe(
      Effect.forkScoped
    )
    return { states, fiber }
  })

/**
 * Creates a session with `AgentSessions.start`, consumes its events (answering requests),
 * and reports everything the caller saw, successes and failures alike.
 */
export const watch = (
  input: Session.CreateSessionInput,
  options: WatchOptions = {}
): Effect.Effect<Watched, AgentSessionError, AgentSessions.AgentSessions> =>
  Effect.scoped(Effect.gen(function*() {
    const running = yield* AgentSessions.start(input, options)
    return yield* watchRunning(running, options)
  }))

/** {@link watch} for a session that is already started (or attached). */
export const watchRunning = (
  running: AgentSessions.RunningSession,
  options: WatchOptions = {}
): Effect.Effect<Watched, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { fiber, states } = yield* recordStates(running.state)
    const events: Array<SessionEvent.SessionEvent> = []
    const answer = options.answer ?? Answer.grant()
    const exit = yield* Stream.runForEach(running.events, (event) =>
      Effect.gen(function*() {
        events.push(event)
        if (options.onEvent !== undefined) yield* options.onEvent(event, running)
        if (event._tag === "ExternalResourceRequested") yield* running.respond(event, answer)
      })).pipe(Effect.exit)
    const outcome = yield* Effect.exit(running.outcome)
    const finalState = yield* SubscriptionRef.get(running.state)
    // Let the state recorder see the last change.
    yield* Effect.yieldNow()
    yield* Fiber.interrupt(fiber)
    return { sessionId: running.session.session_id, events, exit, outcome, states, finalState }
  })

/** The typed failure of an exit, if it failed with one. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): Option.Option<E> =>
  Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()

/** The `_tag` of an exit's typed failure, or `"success"` / `"defect"`. */
export const exitTag = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? failure.value._tag : `defect: ${Cause.pretty(exit.cause)}`
}

/** Events as the documented framing encodes them: a stable text to compare lists with. */
export const wire = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<string> =>
  events.map((event) => Wire.encodeEvent("event-data", event))

/** Drops the observed dialect's transport events (`connected`, `heartbeat`), which no script holds. */
export const withoutTransportEvents = (
  events: ReadonlyArray<SessionEvent.SessionEvent>
): ReadonlyArray<SessionEvent.SessionEvent> =>
  events.filter((event) => event._tag !== "Heartbeat" && event._tag !== "Connected")

/** The answer the simulator records for a granted permission request of a session. */
export const grantedPermission = (sessionId: string): Wire.AnswerData => ({
  granted: true,
  resource_type: "admin_permission_request",
  action_session_id: Script.actionSessionIdOf(sessionId)
})

/** The answer the simulator records for an input request granted with `input`. */
export const grantedInput = (sessionId: string, input: string): Wire.AnswerData => ({
  granted: true,
  resource_type: "request_user_input",
  action_session_id: Script.actionSessionIdOf(sessionId),
  field_name: "email",
  input
})

/** Polls `check` every 10 ms until it holds or `timeoutMillis` passes; returns whether it held. */
export const eventually = (check: () => boolean, timeoutMillis = 5_000): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMillis
    while (!check()) {
      if (Date.now() > deadline) return false
      yield* Effect.sleep("10 millis")
    }
    return true
  })

/** `gc()`, reachable without `--expose-gc`. */
export const gc: () => void = (() => {
  V8.setFlagsFromString("--expose-gc")
  const fn: unknown = Vm.runInNewContext("gc")
  return typeof fn === "function" ? () => void fn() : () => {}
})()

/** The heap in use after a full collection, in bytes. */
export const settledHeap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** How many active handles of each kind the process holds (`TCPSocketWrap`, `Timeout`, ...). */
export const activeResources = (): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/** A close seen by the raw server. */
export interface SeenClose {
  readonly code: number
  readonly reason: string
}

/** A raw `ws` server on loopback, for what the simulator does not expose. */
export interface RawServer {
  readonly url: string
  readonly port: number
  /** The close of every connection, in the order they closed. */
  readonly closes: ReadonlyArray<SeenClose>
  /** Connections accepted so far. */
  readonly accepted: () => number
  /** Connections open now. */
  readonly open: () => number
  /** The text messages every connection sent, per connection. */
  readonly received: ReadonlyArray<Array<string>>
}

/** Starts a raw `ws` server on 127.0.0.1 in the current scope; `onConnection` drives each socket. */
export const rawServer = (
  onConnection: (ws: WebSocket, request: IncomingMessage, index: number) => void
): Effect.Effect<RawServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const closes: Array<SeenClose> = []
    const received: Array<Array<string>> = []
    let accepted = 0
    const wss = yield* Effect.acquireRelease(
      Effect.async<WebSocketServer>((resume) => {
        const server = new WebSocketServer({ port: 0, host: "127.0.0.1" })
        server.once("listening", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          for (const client of server.clients) client.terminate()
          server.close(() => resume(Effect.void))
        })
    )
    wss.on("connection", (ws, req) => {
      const index = accepted
      accepted += 1
      const messages: Array<string> = []
      received.push(messages)
      ws.on("message", (data) => messages.push(String(data)))
      ws.on("close", (code, reason) => closes.push({ code, reason: reason.toString("utf8") }))
      ws.on("error", () => ws.terminate())
      onConnection(ws, req, index)
    })
    const address = wss.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return {
      url: `ws://127.0.0.1:${port}`,
      port,
      closes,
      accepted: () => accepted,
      open: () => wss.clients.size,
      received
    }
  })

/** The whole SDK pointed at a raw server (the HTTP side points nowhere: only `attach` is used). */
export const rawSdkLayer = (wsUrl: string, options: SdkOptions = {}) =>
  NodeAgentSessions.layer({
    apiKey: "raw-server-key",
    baseUrl: "http://127.0.0.1:9",
    wsUrl,
    ...options
  }).pipe(Layer.orDie)
