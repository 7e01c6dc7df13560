/**
 * The event channel's service: `EventStream.make` / `layer` over the WebSocket transport. The
 * engine is made of named parts under `binding/internal/channel/` (see its `engine.ts` for the
 * map); this module makes a connection's engine for a session and re-exports what the rest of the
 * SDK and the tests use.
 */
import * as Socket from "@effect/platform/Socket"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Credentials from "../Credentials.js"
import * as Dialect from "../Dialect.js"
import type { InsecureTransport } from "../Errors.js"
import type * as EventStream from "../EventStream.js"
import * as Wire from "../Wire.js"
import * as Deadlines from "../../binding/internal/channel/deadlines.js"
import { type Engine, makeEngine } from "../../binding/internal/channel/engine.js"
import { resolveSettings } from "../../binding/internal/channel/settings.js"
import { webSocketTransport } from "../../binding/internal/channel/socket.js"
import { tapTransport } from "./channel/tap.js"
import { checkSecureUrl, printableUrl } from "./url.js"

// What the public module and the tests reach through this one (the parts are in channel/).
export { type Engine, type EngineOptions, makeEngine } from "../../binding/internal/channel/engine.js"
export { defaultReconnectSchedule, resolveSettings } from "../../binding/internal/channel/settings.js"
export { ConnectionState } from "../../binding/internal/channel/state.js"
export { recordRejection } from "../../binding/internal/channel/upgrade.js"

/** The layer's options, checked. */
export interface ServiceOptions extends Omit<EventStream.ConnectOptions, "agent"> {
  readonly url: string
  readonly dialect?: Dialect.Dialect | undefined
  readonly allowInsecure?: boolean | undefined
}

/** Checks the address for a connection: `wss`, or plain to loopback or with `allowInsecure`. */
export const checkAddress = (url: string, allowInsecure: boolean | undefined): Effect.Effect<string, InsecureTransport> =>
  Either.match(checkSecureUrl(url, allowInsecure === true), {
    onLeft: Effect.fail,
    onRight: () => Effect.succeed(url)
  })

/**
 * Opens a WebSocket connection's engine (the service's `connect`, with the internals tests
 * observe). `deadlines` is the service's shared timer (a connection's own when not given).
 */
export const connectEngine = (
  options: ServiceOptions,
  sessionId: string,
  connectOptions: EventStream.ConnectOptions = {},
  deadlines?: Deadlines.Deadlines
): Effect.Effect<Engine, InsecureTransport, Scope.Scope | Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const base = yield* checkAddress(options.url, options.allowInsecure)
    const constructor = yield* Socket.WebSocketConstructor
    const dialect = options.dialect ?? Dialect.documented
    const settings = resolveSettings(options, connectOptions, dialect)
    return yield* makeEngine({
      sessionId,
      settings,
      dialect,
      agent: connectOptions.agent,
      printableUrl: printableUrl(Wire.joinPath(base, dialect.connectPath)),
      transport: yield* tapTransport(
        webSocketTransport({ base, dialect, constructor }),
        { sessionId, dialect, transport: "websocket" }
      ),
      deadlines
    })
  })

/**
 * A service over a transport's `connectEngine`, run with exactly the services it needs (captured
 * when the service is made: the context of `make` may hold a Scope that is not the caller's).
 */
export const serviceOf = <R>(
  context: Context.Context<R>,
  connectEngine: (
    sessionId: string,
    connectOptions: EventStream.ConnectOptions
  ) => Effect.Effect<Engine, InsecureTransport, Scope.Scope | R>
): EventStream.Service => {
  const connect = (sessionId: string, connectOptions: EventStream.ConnectOptions = {}) =>
    Effect.map(connectEngine(sessionId, connectOptions), (engine) => engine.connection).pipe(
      Effect.provide(context)
    )
  return {
    connect,
    events: (sessionId, connectOptions) =>
      Stream.unwrapScoped(Effect.map(connect(sessionId, connectOptions), (connection) => connection.events))
  }
}

/** The WebSocket service: its connections share one timer. */
export const make = (
  options: ServiceOptions
): Effect.Effect<EventStream.Service, never, Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const context = Context.make(Credentials.Credentials, yield* Credentials.Credentials).pipe(
      Context.add(Socket.WebSocketConstructor, yield* Socket.WebSocketConstructor)
    )
    const deadlines = Deadlines.make()
    return serviceOf(
      context,
      (sessionId, connectOptions) => connectEngine(options, sessionId, connectOptions, deadlines)
    )
  })
