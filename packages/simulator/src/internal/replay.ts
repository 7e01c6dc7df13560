/**
 * The simulator's replay of a recording over real sockets: a server that answers the
 * recorded create request with the recorded response and serves each connection a client opens
 * as the next recorded connection, over WebSocket or Server-Sent Events, in the recorded
 * dialect: its frames with their recorded delays (divided by `speed`), then its end (a close
 * code, a drop, a refusal). The client's answers are compared with the recorded ones.
 *
 * One recorded session at a time: each create (or, for a recording without one, the first
 * connection) starts a run over the file, read line by line as it goes.
 */
import type * as Http from "node:http"
import type * as NodeStream from "node:stream"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type WebSocket, WebSocketServer } from "ws"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import * as Wire from "effect-agent-session/Wire"
import { errorResponse } from "./api.js"
import * as Body from "./body.js"
import { makeHttp, sendError, sendJson } from "./replayHttp.js"
import { makePlayback } from "./replayPlayback.js"
import { makeRuns, type ReplayServerOptions } from "./replayRuns.js"
import { makeSinks } from "./replaySinks.js"
import { requestUrl } from "./transport.js"

export type { Report, ReplayServerOptions } from "./replayRuns.js"

/** The event channels and the create route of a replay. */
export const make = (options: ReplayServerOptions) => {
  const { header } = options
  const dialect = header.dialect
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxClientFrameBytes, clientTracking: true })
  const sseResponses = new Set<Http.ServerResponse>()
  const runs = makeRuns(options)
  const { answered } = runs
  const { authorized, create, sessionJson } = makeHttp(options, runs)
  const { sseSink, wsSink } = makeSinks(options, runs, sseResponses)
  const { serve } = makePlayback(options, runs)

  // ---------------------------------------------------------------------------
  // WebSocket
  // ---------------------------------------------------------------------------

  /** The message handshake: the first text frame is `{ apiKey, sessionId }` (within 5 s). */
  const awaitHandshake = (ws: WebSocket, accepted: () => void): void => {
    const timer = setTimeout(() => ws.close(1008, "handshake timeout"), 5_000)
    ws.once("close", () => clearTimeout(timer))
    ws.once("message", (data) => {
      clearTimeout(timer)
      const frame = Wire.decodeClientFrame(String(data), { maxFrameSize: options.maxClientFrameBytes })
      if (Either.isLeft(frame) || frame.right._tag !== "Handshake") {
        return ws.close(1008, "expected the handshake {apiKey, sessionId}")
      }
      if (frame.right.apiKey !== options.accountKey) return ws.close(1008, "invalid API key")
      if (frame.right.sessionId !== header.sessionId) return ws.close(1008, "no such session")
      accepted()
    })
  }

  const refuseUpgrade = (socket: NodeStream.Duplex, error: Parameters<typeof errorResponse>[0]) => {
    const { body, status } = errorResponse(error)
    if (!socket.writable) return void socket.destroy()
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${
        Buffer.byteLength(body)
      }\r\nConnection: close\r\n\r\n${body}`
    )
  }

  const onUpgrade = (request: Http.IncomingMessage, socket: NodeStream.Duplex, head: Buffer): void => {
    socket.on("error", () => socket.destroy())
    const url = requestUrl(request)
    if (url === undefined || url.pathname !== dialect.connectPath) {
      return refuseUpgrade(socket, new ServiceApi.ApiNotFound({ error: "no such route" }))
    }
    const sessionId = url.searchParams.get("sessionId")
    const apiKey = url.searchParams.get("apiKey")
    const byQuery = dialect.handshake === "query" || (dialect.handshake === "both" && sessionId !== null && apiKey !== null)
    if (!byQuery) {
      // Authenticated by its first message before it is given a recorded connection.
      return wss.handleUpgrade(request, socket, head, (ws) => {
        ws.on("error", () => ws.terminate())
        awaitHandshake(ws, () => serve(wsSink(socket, ws)))
      })
    }
    if (apiKey !== options.accountKey) return refuseUpgrade(socket, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return refuseUpgrade(socket, new ServiceApi.ApiNotFound({ error: "no such session" }))
    serve(wsSink(
      socket,
      Effect.async<WebSocket>((resume) => wss.handleUpgrade(request, socket, head, (ws) => resume(Effect.succeed(ws))))
    ))
  }

  // ---------------------------------------------------------------------------
  // Server-Sent Events
  // ---------------------------------------------------------------------------

  const queryOf = (request: Http.IncomingMessage) => {
    const url = requestUrl(request)
    return { apiKey: url?.searchParams.get("apiKey") ?? "", sessionId: url?.searchParams.get("sessionId") ?? "" }
  }

  const sseConnect = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const { apiKey, sessionId } = queryOf(request)
    if (apiKey !== options.accountKey) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
    serve(sseSink(response))
  }

  const sseEgress = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const { apiKey, sessionId } = queryOf(request)
    if (apiKey !== options.accountKey) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
    Body.readBody(request, options.limits, (body) => {
      if (body._tag === "Aborted") return void response.destroy()
      const frame = body._tag === "Ok" ? Wire.decodeClientFrame(body.text, { maxFrameSize: options.maxClientFrameBytes }) : undefined
      if (frame === undefined || Either.isLeft(frame) || frame.right._tag !== "Answer") {
        return sendError(response, new ServiceApi.ApiBadRequest({ error: "expected { event: \"external_resource_granted\", data }" }))
      }
      answered(frame.right.data)
      sendJson(response, 202, { accepted: true })
    })
  }

  // ---------------------------------------------------------------------------
  // Routes
  // ---------------------------------------------------------------------------

  const onRequest = (request: Http.IncomingMessage, response: Http.ServerResponse): void => {
    const url = requestUrl(request)
    if (url === undefined) return sendError(response, new ServiceApi.ApiBadRequest({ error: "the request target is not a valid URL" }))
    const route = url.pathname
    if (request.method === "POST" && route === dialect.sessionsPath) return create(request, response)
    if (request.method === "GET" && route === dialect.sse.connectPath) return sseConnect(request, response)
    if (request.method === "POST" && route === dialect.sse.egressPath) return sseEgress(request, response)
    if (request.method === "GET" && dialect.retrieve && route.startsWith(`${dialect.sessionsPath}/`)) {
      if (!authorized(request)) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
      const session = runs.latest()?.session
      if (session === undefined || route !== `${dialect.sessionsPath}/${session.session_id}`) {
        return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
      }
      return sendJson(response, 200, sessionJson(session))
    }
    return sendError(response, new ServiceApi.ApiNotFound({ error: "the replay serves one recorded session: no such route" }))
  }

  const close = Effect.async<void>((resume) => {
    runs.closeReaders()
    for (const ws of wss.clients) ws.terminate()
    for (const response of sseResponses) response.destroy()
    sseResponses.clear()
    wss.close(() => resume(Effect.void))
  })

  return {
    onRequest,
    onUpgrade,
    result: runs.result,
    runs: Effect.sync(runs.started),
    close
  } as const
}
