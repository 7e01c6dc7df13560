/**
 * The Node server of the simulator (see `Simulator.make`): HTTP requests go through the fault gate
 * and the bounds on bodies to the Server-Sent Events routes or the contract (served by
 * `HttpApiBuilder`); upgrades go to the WebSocket channel; what no route serves and what Node's
 * parser refuses are answered with a `{ _tag, error }` body, then the connection is closed.
 */
import * as Http from "node:http"
import type * as Stream from "node:stream"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Dialect from "effect-agent-session/Dialect"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import type { Limits, Options, Service } from "../Simulator.js"
import * as Api from "./api.js"
import * as Body from "./body.js"
import * as Listen from "./listen.js"
import { Store } from "./store.js"
import * as Transport from "./transport.js"

/** Methods a web `Request` refuses (the Fetch standard's forbidden methods), which no route serves. */
const unroutableMethods: ReadonlySet<string> = new Set(["CONNECT", "TRACE", "TRACK"])

const noSuchRoute = new ServiceApi.ApiNotFound({ error: "no such route" })

const hostForUrl = (host: string): string => (host.includes(":") ? `[${host}]` : host)

/** What `Simulator.make` resolved from its options. */
export interface Resolved {
  readonly dialect: Dialect.Dialect
  readonly host: string
  readonly accountKey: string
  readonly limits: Limits
}

/** Serves the simulator on `resolved.host` in the current scope (closed with the scope). */
export const serve = (
  options: Options,
  { accountKey, dialect, host, limits }: Resolved
): Effect.Effect<Service, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const bodyTimeoutMillis = Duration.toMillis(Duration.decode(limits.bodyTimeout))
    const store = new Store(accountKey, options.scenario ?? {}, options.faults ?? {}, dialect, limits)
    const bodies: Api.Bodies = new WeakMap()

    // The Node server: HTTP requests go to the fault gate, then to the SSE routes or the contract;
    // upgrades go to the WebSocket channel.
    const server = yield* Listen.scoped(() => {
      const server = Http.createServer()
      // Node's own bounds on slow requests (its refusals carry no body; ours come first).
      server.headersTimeout = Math.max(bodyTimeoutMillis, 10_000)
      server.requestTimeout = Math.max(bodyTimeoutMillis * 3, 30_000)
      return server
    })
    const timers = new Set<NodeJS.Timeout>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
      })
    )
    const port = yield* Listen.listen(server, options.port ?? 0, host)

    const runFork = yield* FiberSet.makeRuntime<never, unknown, unknown>()
    const transport = Transport.make({
      store,
      dialect,
      runFork,
      heartbeatInterval: Duration.decode(options.heartbeatInterval ?? Duration.seconds(2)),
      handshakeTimeout: Duration.decode(options.handshakeTimeout ?? Duration.seconds(5)),
      maxClientFrameBytes: limits.maxClientFrameBytes,
      maxDepth: limits.maxDepth,
      maxAnswerFieldLength: limits.maxAnswerFieldLength
    })
    yield* Effect.addFinalizer(() => transport.close)

    let contract: ((request: Http.IncomingMessage, response: Http.ServerResponse) => void) | undefined
    const sendError = (
      response: Http.ServerResponse,
      error: Api.ApiError,
      headers: Record<string, string> = {},
      closeAfter = false
    ) => {
      const { body, status } = Api.errorResponse(error)
      if (response.headersSent) return void response.destroy()
      response.writeHead(status, {
        "content-type": "application/json",
        ...headers,
        ...(closeAfter ? { connection: "close" } : {})
      })
      response.end(body, () => {
        if (closeAfter) response.socket?.destroy()
      })
    }
    const serve = (request: Http.IncomingMessage, response: Http.ServerResponse, body: string | undefined): void => {
      const sse = transport.routeOf(request)
      if (sse === "connect") return transport.sseConnect(request, response)
      if (sse === "egress") return transport.sseEgress(request, response, body ?? "")
      if (contract === undefined) {
        return sendError(response, new ServiceApi.ApiUnavailable({ error: "the simulator is not serving" }))
      }
      if (body !== undefined) bodies.set(request, body)
      contract(request, response)
    }
    const bodyLimits = {
      maxBodyBytes: limits.maxBodyBytes,
      maxDrainBytes: limits.maxDrainBytes,
      bodyTimeoutMillis,
      maxDepth: limits.maxDepth
    }
    const dispatch = (request: Http.IncomingMessage, response: Http.ServerResponse): void => {
      if (request.destroyed) return
      // The contract reads requests through a web `Request`, which refuses these methods: no route
      // serves them, so they get the answer of every other method no route serves.
      if (unroutableMethods.has(request.method ?? "")) return sendError(response, noSuchRoute)
      if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") {
        return serve(request, response, undefined)
      }
      // Every body is read here, under the bounds, before anything parses it.
      Body.readBody(request, bodyLimits, (result) => {
        switch (result._tag) {
          case "Ok":
            return serve(request, response, result.text)
          case "TooLarge":
            return sendError(
              response,
              new ServiceApi.ApiPayloadTooLarge({ error: `the body is over ${limits.maxBodyBytes} bytes` }),
              {},
              !result.drained
            )
          case "Timeout":
            return sendError(
              response,
              new ServiceApi.ApiRequestTimeout({ error: `the body did not arrive within ${bodyTimeoutMillis} ms` }),
              {},
              true
            )
          case "NotUtf8":
            return sendError(response, new ServiceApi.ApiBadRequest({ error: "the body is not valid UTF-8" }))
          case "TooDeep":
            return sendError(
              response,
              new ServiceApi.ApiBadRequest({ error: `the body is nested deeper than ${limits.maxDepth} levels` })
            )
          case "Aborted":
            return void response.destroy()
        }
      })
    }
    server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      if (Transport.requestUrl(request) === undefined) {
        return sendError(response, new ServiceApi.ApiBadRequest({ error: "the request target is not a valid URL" }))
      }
      const gate = store.gate()
      switch (gate._tag) {
        case "Unavailable":
          return sendError(response, new ServiceApi.ApiUnavailable({ error: "service unavailable (simulated)" }))
        case "RateLimited":
          return sendError(response, new ServiceApi.ApiRateLimited({ error: "rate limited (simulated)" }), {
            "retry-after": gate.retryAfter
          })
        case "Pass": {
          if (gate.delayMillis <= 0) return dispatch(request, response)
          const timer = setTimeout(() => {
            timers.delete(timer)
            dispatch(request, response)
          }, gate.delayMillis)
          timers.add(timer)
        }
      }
    })
    server.on("upgrade", transport.onUpgrade)
    // CONNECT (a tunnel): no route serves it. Without this listener Node closes the connection
    // without a word; with it, the answer of every other method no route serves, then the close.
    server.on("connect", (_request: Http.IncomingMessage, socket: Stream.Duplex) => {
      const { body, status } = Api.errorResponse(noSuchRoute)
      socket.on("error", () => socket.destroy())
      socket.end(
        `HTTP/1.1 ${status} Not Found\r\nContent-Type: application/json\r\nContent-Length: ${
          Buffer.byteLength(body)
        }\r\nConnection: close\r\n\r\n${body}`
      )
    })
    // A request Node's parser refuses (a bad request line or header, headers over 16 KiB, a request
    // too slow to arrive): answered with a body too, then the connection is closed.
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Stream.Duplex) => {
      if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
      const refusal = error.code === "HPE_HEADER_OVERFLOW"
        ? { status: 431, text: "Request Header Fields Too Large", error: new ServiceApi.ApiBadRequest({ error: "the request head is over 16 KiB" }) }
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? { status: 408, text: "Request Timeout", error: new ServiceApi.ApiRequestTimeout({ error: "the request did not arrive in time" }) }
        : { status: 400, text: "Bad Request", error: new ServiceApi.ApiBadRequest({ error: "the request is not valid HTTP/1.1" }) }
      const { body } = Api.errorResponse(refusal.error)
      socket.end(
        `HTTP/1.1 ${refusal.status} ${refusal.text}\r\nContent-Type: application/json\r\nContent-Length: ${
          Buffer.byteLength(body)
        }\r\nConnection: close\r\n\r\n${body}`
      )
    })

    // The contract, served by HttpApiBuilder on an HttpServer whose `serve` installs the handler.
    const httpServer = HttpServer.make({
      address: { _tag: "TcpAddress", hostname: host, port },
      serve: (app, middleware) =>
        Effect.gen(function*() {
          contract = middleware === undefined
            ? yield* NodeHttpServer.makeHandler(app)
            : yield* NodeHttpServer.makeHandler(app, middleware)
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              contract = undefined
            })
          )
        })
    })
    yield* Layer.build(
      Api.layer(store, dialect, bodies, { maxGoalLength: limits.maxGoalLength }).pipe(
        Layer.provide(Layer.succeed(HttpServer.HttpServer, httpServer)),
        Layer.provide(NodeHttpServer.layerContext)
      )
    )

    const hostname = hostForUrl(host)
    return {
      baseUrl: `http://${hostname}:${port}`,
      wsUrl: `ws://${hostname}:${port}`,
      port,
      accountKey,
      dialect,
      setFaults: (faults) => Effect.sync(() => store.setFaults(faults)),
      setScenario: (scenario) => Effect.sync(() => store.setScenario(scenario)),
      httpRequests: Effect.sync(() => store.httpRequests),
      script: (sessionId) => Effect.sync(() => store.sessions.get(sessionId)?.script() ?? []),
      answers: (sessionId) => Effect.sync(() => [...(store.sessions.get(sessionId)?.answers ?? [])]),
      connections: (sessionId) => Effect.sync(() => store.sessions.get(sessionId)?.connections ?? 0)
    }
  })
