/**
 * The whole-SDK layer of a runtime (`NodeAgentSessions`, `FetchAgentSessions`), written once: the
 * runtime gives an HTTP client and a WebSocket constructor; everything else (the address rules,
 * the dialect, the transport, the credentials read from values or from configuration) is the same
 * whatever the runtime.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SdkLayer } from "effect-agent-session-shell"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Credentials from "../../src/Credentials.js"
import type { InsecureTransport, InvalidRequest } from "../../src/Errors.js"
import * as EventStream from "../../src/EventStream.js"
import {
  type ConfigError,
  configLiterals,
  configString,
  type HttpClient,
  type Socket,
  unshared,
  unwrapLayer
} from "../../src/internal/line.js"
import type { ConfigOptions, Options, Services } from "../../src/NodeAgentSessions.js"

/** What a runtime gives the SDK: its HTTP client and its WebSocket constructor. */
export interface Runtime {
  readonly http: Layer.Layer<HttpClient.HttpClient>
  readonly webSocket: Layer.Layer<Socket.WebSocketConstructor>
}

/** The whole SDK over a runtime, with the given credentials. */
export const build = (
  runtime: Runtime,
  options: Options,
  credentials: Layer.Layer<Credentials.Credentials>
): Layer.Layer<Services, InsecureTransport | InvalidRequest> => {
  const { allowInsecure, dialect, sse } = SdkLayer.resolve(options)
  const api = AgentApi.layer({ ...options.http, baseUrl: options.baseUrl, dialect, allowInsecure }).pipe(
    Layer.provide(runtime.http)
  )
  const events = sse
    ? EventStream.layerSse({ ...options.events, url: options.baseUrl, dialect, allowInsecure }).pipe(
      Layer.provide(runtime.http)
    )
    : EventStream.layer({
      ...options.events,
      url: options.wsUrl ?? EventStream.wsUrlFromBaseUrl(options.baseUrl),
      dialect,
      allowInsecure
    }).pipe(Layer.provide(runtime.webSocket))
  // Unshared: where a line memoizes a layer by reference across the `Effect.provide`s of one
  // program, the shared `AgentSessions.layer` built once (say, for the account key) would otherwise
  // serve a second whole-SDK layer (another key, another service) with the first one's.
  return Layer.provideMerge(
    unshared(AgentSessions.layer),
    Layer.merge(api, events)
  ).pipe(Layer.provideMerge(credentials))
}

/** The whole SDK over a runtime, from values. */
export const fromOptions = (
  runtime: Runtime,
  options: Options
): Layer.Layer<Services, InsecureTransport | InvalidRequest> =>
  build(
    runtime,
    options,
    Credentials.layer({ apiKey: options.apiKey, agents: options.agents, selection: options.selection })
  )

/** The whole SDK over a runtime, from configuration (the variables `NodeAgentSessions.layerConfig` documents). */
export const fromConfig = (
  runtime: Runtime,
  options: ConfigOptions
): Layer.Layer<Services, InsecureTransport | InvalidRequest | ConfigError> =>
  unwrapLayer(
    Effect.gen(function*() {
      const { allowInsecure, baseUrl, dialect, transport, wsUrl } = yield* Config.all({
        baseUrl: options.baseUrl ?? configString(AgentApi.ENV_BASE_URL),
        transport: options.transport ??
          configLiterals(SdkLayer.transports, SdkLayer.ENV_TRANSPORT).pipe(Config.withDefault(SdkLayer.defaultTransport)),
        wsUrl: Config.option(options.wsUrl ?? configString(EventStream.ENV_WS_URL)),
        dialect: options.dialect ?? AgentApi.dialectConfig,
        allowInsecure: options.allowInsecure ?? Config.succeed(false)
      })
      const credentials = Credentials.layerConfig({
        agents: options.agents,
        selection: options.selection,
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey })
      })
      return build(runtime, {
        ...options,
        apiKey: undefined,
        baseUrl,
        wsUrl: Option.getOrUndefined(wsUrl),
        dialect,
        transport,
        allowInsecure
      }, credentials)
    })
  )
