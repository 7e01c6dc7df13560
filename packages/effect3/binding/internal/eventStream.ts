/**
 * The event channel's service: `EventStream.make` / `layer` over the WebSocket transport. The
 * engine is made of named parts under `channel/` (see `channel/engine.ts` for the map); this
 * module makes a connection's engine for a session and re-exports what the rest of the SDK and
 * the tests use.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Url } from "effect-agent-session-core"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import { InsecureTransport } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import * as Wire from "../../src/Wire.js"
import { type Engine, makeEngineWith } from "./channel/engine.js"
import { tapTransport } from "../../src/internal/channel/tap.js"
import { Socket, streamOfScoped, type WebSocketConstructorService } from "../../src/internal/line.js"
import * as Deadlines from "./channel/deadlines.js"
import { resolveSettings } from "./channel/settings.js"
import { webSocketTransport } from "./channel/socket.js"
import type { Transport } from "./channel/transport.js"

// What the public module and the tests reach through this one (the parts are in channel/).
export { type Engine, type EngineOptions, makeEngine } from "./channel/engine.js"
export { defaultFirstConnectSchedule, defaultReconnectSchedule, resolveSettings } from "./channel/settings.js"
export { ConnectionState } from "./channel/state.js"
export { recordRejection } from "./channel/upgrade.js"

/** The address without credentials, query string or fragment: safe to print. */
export const printableUrl: (url: URL | string) => string = Url.printableUrl

/** The layer's options, checked. */
export interface ServiceOptions extends Omit<EventStream.ConnectOptions, "agent"> {
  readonly url: string
  readonly dialect?: Dialect.Dialect | undefined
  readonly allowInsecure?: boolean | undefined
}

/** Checks the address for a connection: `wss`, or plain to loopback or with `allowInsecure`. */
export const checkAddress = (url: string, allowInsecure: boolean | undefined): Effect.Effect<string, InsecureTransport> => {
  const checked = Url.checkSecureUrl(url, allowInsecure === true)
  return checked._tag === "Secure"
    ? Effect.succeed(url)
    : Effect.fail(new InsecureTransport({ url: checked.printable }))
}

/** The services a WebSocket connection is made with (captured when the service is made). */
export interface WebSocketServices {
  readonly credentials: Credentials.Service
  readonly constructor: WebSocketConstructorService
}

/**
 * Opens a WebSocket connection's engine with the services given: the service's `connect`, one
 * step with no service looked up (a runner taking sessions over makes thousands at once).
 * `deadlines` is the service's shared timer (a connection's own when not given).
 */
export const openEngine = (
  options: ServiceOptions,
  services: WebSocketServices,
  sessionId: string,
  connectOptions: EventStream.ConnectOptions = {},
  deadlines?: Deadlines.Deadlines
): Effect.Effect<Engine, InsecureTransport, Scope.Scope> =>
  Effect.flatMap(checkAddress(options.url, options.allowInsecure), (base) => {
    const dialect = options.dialect ?? Dialect.documented
    const shared = sharedOf(options, base, dialect, services.constructor)
    // A recorder, if the edition has one, sees the connection here (`tap.ts`).
    return Effect.flatMap(
      tapTransport(shared.transport, { sessionId, dialect, transport: "websocket" }),
      (transport) =>
        makeEngineWith(services.credentials, {
          sessionId,
          settings: resolveSettings(options, connectOptions, dialect),
          dialect,
          agent: connectOptions.agent,
          printableUrl: shared.printableUrl,
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
): Effect.Effect<Engine, InsecureTransport, Scope.Scope | Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const services = { credentials: yield* Credentials.Credentials, constructor: yield* Socket.WebSocketConstructor }
    return yield* openEngine(options, services, sessionId, connectOptions, deadlines)
  })

/** What the connections made with the same address, dialect and socket constructor share. */
interface Shared {
  readonly base: string
  readonly dialect: Dialect.Dialect
  readonly constructor: WebSocketConstructorService
  readonly transport: Transport
  readonly printableUrl: string
}

/**
 * One per service's options (its connections' transport and address, not one per connection);
 * made again when the address, the dialect or the constructor it was made with is not the one of
 * this connect (the options are the caller's object).
 */
const sharedByOptions = new WeakMap<ServiceOptions, Shared>()

const sharedOf = (
  options: ServiceOptions,
  base: string,
  dialect: Dialect.Dialect,
  constructor: WebSocketConstructorService
): Shared => {
  const made = sharedByOptions.get(options)
  if (made !== undefined && made.base === base && made.dialect === dialect && made.constructor === constructor) {
    return made
  }
  const shared: Shared = {
    base,
    dialect,
    constructor,
    transport: webSocketTransport({ base, dialect, constructor }),
    printableUrl: printableUrl(Wire.joinPath(base, dialect.connectPath))
  }
  sharedByOptions.set(options, shared)
  return shared
}

/**
 * A service over a transport's engine, whose services were captured when the service was made
 * (the context of `make` may hold a Scope that is not the caller's): `connect` opens in the
 * caller's scope.
 */
export const serviceOf = (
  openEngine: (
    sessionId: string,
    connectOptions: EventStream.ConnectOptions
  ) => Effect.Effect<Engine, InsecureTransport, Scope.Scope>
): EventStream.Service => {
  const connect = (sessionId: string, connectOptions: EventStream.ConnectOptions = {}) =>
    Effect.map(openEngine(sessionId, connectOptions), (engine) => engine.connection)
  return {
    connect,
    // The connection opened in the stream's scope, its events pulled as the stream's own.
    events: (sessionId, connectOptions) =>
      streamOfScoped(connect(sessionId, connectOptions), (connection) => connection.events)
  }
}

/** The WebSocket service: its connections share one timer. */
export const make = (
  options: ServiceOptions
): Effect.Effect<EventStream.Service, never, Credentials.Credentials | Socket.WebSocketConstructor> =>
  Effect.gen(function*() {
    const services: WebSocketServices = {
      credentials: yield* Credentials.Credentials,
      constructor: yield* Socket.WebSocketConstructor
    }
    const deadlines = Deadlines.make()
    return serviceOf((sessionId, connectOptions) => openEngine(options, services, sessionId, connectOptions, deadlines))
  })
