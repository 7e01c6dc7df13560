/**
 * The simulator's event channels, on the Node server that also serves the HTTP contract:
 *
 * - the WebSocket `dialect.connectPath`, on the server's `upgrade` event with the `ws` package
 *   (exact control of close codes, of abrupt drops after a flushed frame, and of back-pressure);
 *   authenticated by hand before the upgrade (query handshake: 401/403/404 answered on the raw
 *   socket) or by the first message (close 1008);
 * - the Server-Sent Events transport of the observed client: `GET dialect.sse.connectPath` and
 *   `POST dialect.sse.egressPath`.
 */
import type * as Http from "node:http"
import type * as Stream from "node:stream"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { type WebSocket, WebSocketServer } from "ws"
import type * as Dialect from "effect-agent-session/Dialect"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import * as Wire from "effect-agent-session/Wire"
import * as Script from "../Script.js"
import { errorResponse } from "./api.js"
import { type Connection, detach, type Outgoing, pump, type SessionState, type Sink } from "./session.js"
import { type Access, principalOf, type Store } from "./store.js"

/** Forks an effect into the simulator's scope. */
export type RunFork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>

/** The settings of the event channels. */
interface TransportOptions {
  readonly store: Store
  readonly dialect: Dialect.Dialect
  readonly runFork: RunFork
  readonly heartbeatInterval: Duration.Duration
  readonly handshakeTimeout: Duration.Duration
  /** The largest client frame (WebSocket message or egress body), in bytes. */
  readonly maxClientFrameBytes: number
  /** The deepest JSON nesting of a client frame. */
  readonly maxDepth: number
  /** The longest string field of an answer. */
  readonly maxAnswerFieldLength: number
}

/** How often an accepted WebSocket is pinged; one unanswered ping ends it (close 1006 for the peer). */
const livenessIntervalMillis = 30_000

/** The request target of a request, when it parses (`new URL` throws on `http://x:99999/`). */
export const requestUrl = (request: Http.IncomingMessage): URL | undefined => {
  const target = request.url ?? "/"
  return URL.canParse(target, "http://simulator") ? new URL(target, "http://simulator") : undefined
}

const accessError = (access: Exclude<Access, { _tag: "Ok" }>) => {
  switch (access._tag) {
    case "Unauthorized":
      return new ServiceApi.ApiUnauthorized({ error: access.reason })
    case "Forbidden":
      return new ServiceApi.ApiForbidden({ error: access.reason })
    case "NotFound":
      return new ServiceApi.ApiNotFound({ error: access.reason })
    case "Conflict":
      return new ServiceApi.ApiConflict({ error: access.reason })
  }
}

const statusText: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict"
}

const rejectedHandshake = () => new ServiceApi.ApiUnauthorized({ error: "handshake rejected" })

/** Answers an upgrade request with an HTTP error, on the raw socket, before any upgrade. */
const refuseUpgrade = (socket: Stream.Duplex, error: Parameters<typeof errorResponse>[0]): void => {
  const { body, status } = errorResponse(error)
  const reason = statusText[status] ?? "Error"
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${
        Buffer.byteLength(body)
      }\r\nConnection: close\r\n\r\n${body}`
    )
  } else {
    socket.destroy()
  }
}

const textOf = (data: WebSocket.RawData): string =>
  Array.isArray(data)
    ? Buffer.concat(data).toString("utf8")
    : Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Buffer.from(data).toString("utf8")

/** Events as an SSE stream frames them: `event: <wire name>\ndata: <json payload>\n\n`. */
const sseText = (item: Outgoing): string => {
  if (item._tag === "Raw") return `event: ${item.name}\ndata: ${item.text}\n\n`
  const { event, payload } = SessionEvent.toWire(item.event)
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`
}

const sentinel = "\u0001bulk-content\u0001"
const sentinelJson = JSON.stringify(sentinel).slice(1, -1)

/**
 * Bulk `action_run` frames differ only in their content: the frame is encoded once by
 * `Wire.encodeEvent` with a sentinel content, and each frame splices its content (plain ASCII, see
 * `Script.bulkContent`) into that template. The output is exactly what `encodeEvent` gives.
 */
const bulkEncoder = (encode: (event: SessionEvent.SessionEvent) => string) => {
  let template: { readonly prefix: string; readonly suffix: string } | undefined
  return (event: SessionEvent.SessionEvent, n: number): string => {
    if (template === undefined) {
      const frame = event._tag === "ActionRun" ? encode({ ...event, content: sentinel }) : ""
      const at = frame.indexOf(sentinelJson)
      if (at < 0) return encode(event)
      template = { prefix: frame.slice(0, at), suffix: frame.slice(at + sentinelJson.length) }
    }
    return template.prefix + Script.bulkContent(n) + template.suffix
  }
}

const wsSink = (ws: WebSocket, framing: Dialect.Framing): Sink => {
  const encode = (event: SessionEvent.SessionEvent) => Wire.encodeEvent(framing, event)
  const encodeBulk = bulkEncoder(encode)
  return {
    buffered: () => ws.bufferedAmount,
    write: (item, onFlushed) => {
      if (ws.readyState !== ws.OPEN) {
        onFlushed?.(false)
        return
      }
      const text = item._tag === "Raw"
        ? item.text
        : item.bulk === undefined
        ? encode(item.event)
        : encodeBulk(item.event, item.bulk)
      if (onFlushed === undefined) ws.send(text)
      else ws.send(text, (error) => onFlushed(error === undefined || error === null))
    },
    end: () => ws.close(1000, "complete"),
    fail: (code, reason) => ws.close(code, reason),
    // No close frame: the TCP socket is destroyed, the client sees 1006.
    drop: () => ws.terminate()
  }
}

const sseSink = (response: Http.ServerResponse): Sink => ({
  buffered: () => response.writableLength,
  write: (item, onFlushed) => {
    if (response.destroyed || response.writableEnded) {
      onFlushed?.(false)
      return
    }
    const text = sseText(item)
    if (onFlushed === undefined) response.write(text)
    else response.write(text, (error) => onFlushed(error === undefined || error === null))
  },
  end: () => response.end(),
  fail: () => response.end(),
  drop: () => response.destroy()
})

/** The event channels of one simulator. */
export const make = (options: TransportOptions) => {
  const { dialect, runFork, store } = options
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxClientFrameBytes, clientTracking: true })
  const frameOptions = { maxFrameSize: options.maxClientFrameBytes, maxDepth: options.maxDepth }
  const answerTooLong = (data: Wire.AnswerData): boolean =>
    [data.resource_type, data.action_session_id, data.field_name, data.input].some((field) =>
      field !== undefined && field.length > options.maxAnswerFieldLength
    )
  const sseResponses = new Set<Http.ServerResponse>()
  const measure = (event: SessionEvent.SessionEvent) => Buffer.byteLength(Wire.encodeEvent(dialect.framing, event))
  const measureSse = (event: SessionEvent.SessionEvent) => Buffer.byteLength(sseText({ _tag: "Event", event }))

  /**
   * Starts the pump of a newly accepted connection; returns a function to call when it closes, or
   * `undefined` when another principal's connection is open (the caller refuses).
   */
  const start = (session: SessionState, sink: Sink, sse: boolean, principal: string): (() => void) | undefined => {
    const connection: Connection | undefined = session.attach(sink, principal)
    if (connection === undefined) return undefined
    const fiber = runFork(
      pump(session, connection, {
        heartbeats: dialect.heartbeats,
        heartbeatInterval: options.heartbeatInterval,
        measure: sse ? measureSse : measure
      })
    )
    return () => {
      detach(session, connection)
      runFork(Fiber.interrupt(fiber))
    }
  }

  const acceptWs = (ws: WebSocket, session: SessionState, principal: string): void => {
    const stop = start(session, wsSink(ws, dialect.framing), false, principal)
    if (stop === undefined) {
      ws.close(1008, "the session is connected by another principal")
      return
    }
    ws.on("message", (data) => {
      const frame = Wire.decodeClientFrame(textOf(data), frameOptions)
      if (Either.isLeft(frame)) {
        ws.close(1007, frame.left._tag === "FrameTooLarge" ? "frame too large" : "malformed frame")
        return
      }
      // A handshake again (the `both` handshake sends it on an authenticated socket): nothing to do.
      if (frame.right._tag !== "Answer") return
      if (answerTooLong(frame.right.data)) {
        ws.close(1008, `an answer field is over ${options.maxAnswerFieldLength} characters`)
        return
      }
      const outcome = session.answer(frame.right.data)
      if (outcome._tag === "TooMany") ws.close(1008, `too many answers (at most ${outcome.limit})`)
    })
    // A peer that vanished without a close (a half-open TCP connection) would hold the session as
    // connected for ever: ping it, and end the connection when a ping goes unanswered.
    let alive = true
    ws.on("pong", () => {
      alive = true
    })
    const liveness = setInterval(() => {
      if (!alive) return ws.terminate()
      alive = false
      ws.ping()
    }, livenessIntervalMillis)
    liveness.unref()
    ws.once("close", () => {
      clearInterval(liveness)
      stop()
    })
  }

  /** The `message` handshake: the first text frame is `{ apiKey, sessionId }`. */
  const awaitHandshake = (ws: WebSocket): void => {
    const timer = setTimeout(() => ws.close(1008, "handshake timeout"), Duration.toMillis(options.handshakeTimeout))
    ws.once("close", () => clearTimeout(timer))
    ws.once("message", (data) => {
      clearTimeout(timer)
      const frame = Wire.decodeClientFrame(textOf(data), frameOptions)
      if (Either.isLeft(frame) || frame.right._tag !== "Handshake") {
        ws.close(1008, "expected the handshake {apiKey, sessionId}")
        return
      }
      if (store.faults.ws?.rejectHandshake === true) {
        ws.close(1008, "handshake rejected")
        return
      }
      const access = store.connectAccess(frame.right.apiKey, frame.right.sessionId)
      if (access._tag !== "Ok") {
        ws.close(1008, access.reason)
        return
      }
      acceptWs(ws, access.session, principalOf(access.identity))
    })
  }

  const onUpgrade = (request: Http.IncomingMessage, socket: Stream.Duplex, head: Buffer): void => {
    socket.on("error", () => socket.destroy())
    const url = requestUrl(request)
    if (url === undefined) {
      refuseUpgrade(socket, new ServiceApi.ApiBadRequest({ error: "the request target is not a valid URL" }))
      return
    }
    if (url.pathname !== dialect.connectPath) {
      refuseUpgrade(socket, new ServiceApi.ApiNotFound({ error: "no such route" }))
      return
    }
    const sessionId = url.searchParams.get("sessionId")
    const apiKey = url.searchParams.get("apiKey")
    const byQuery = dialect.handshake === "query" ||
      (dialect.handshake === "both" && sessionId !== null && apiKey !== null)
    if (!byQuery) {
      wss.handleUpgrade(request, socket, head, (ws) => {
        ws.on("error", () => ws.terminate())
        awaitHandshake(ws)
      })
      return
    }
    if (store.faults.ws?.rejectHandshake === true) {
      refuseUpgrade(socket, rejectedHandshake())
      return
    }
    const access = store.connectAccess(apiKey ?? "", sessionId ?? "")
    if (access._tag !== "Ok") {
      refuseUpgrade(socket, accessError(access))
      return
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on("error", () => ws.terminate())
      acceptWs(ws, access.session, principalOf(access.identity))
    })
  }

  const sendError = (response: Http.ServerResponse, error: Parameters<typeof errorResponse>[0]): void => {
    const { body, status } = errorResponse(error)
    response.writeHead(status, { "content-type": "application/json" }).end(body)
  }

  const queryParams = (request: Http.IncomingMessage) => {
    const url = requestUrl(request)
    return {
      apiKey: url?.searchParams.get("apiKey") ?? "",
      sessionId: url?.searchParams.get("sessionId") ?? ""
    }
  }

  /** `GET sse.connectPath?sessionId&apiKey`: the session's events as named SSE events. */
  const sseConnect = (request: Http.IncomingMessage, response: Http.ServerResponse): void => {
    if (store.faults.ws?.rejectHandshake === true) return sendError(response, rejectedHandshake())
    const { apiKey, sessionId } = queryParams(request)
    const access = store.connectAccess(apiKey, sessionId)
    if (access._tag !== "Ok") return sendError(response, accessError(access))
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive"
    })
    response.flushHeaders()
    // SSE has no ping: TCP keep-alive finds a peer that vanished without closing.
    request.socket.setKeepAlive(true, livenessIntervalMillis)
    // `connectAccess` checked the principal in this same turn: the attach cannot be refused.
    const stop = start(access.session, sseSink(response), true, principalOf(access.identity))
    if (stop === undefined) return void response.end()
    sseResponses.add(response)
    response.once("close", () => {
      sseResponses.delete(response)
      stop()
    })
  }

  /**
   * `POST sse.egressPath?sessionId&apiKey` with `{ event: "external_resource_granted", data }`
   * (the body already read under the simulator's bounds).
   */
  const sseEgress = (request: Http.IncomingMessage, response: Http.ServerResponse, body: string): void => {
    const { apiKey, sessionId } = queryParams(request)
    const access = store.access(apiKey, sessionId)
    if (access._tag !== "Ok") return sendError(response, accessError(access))
    const frame = Wire.decodeClientFrame(body, frameOptions)
    if (Either.isLeft(frame) && frame.left._tag === "FrameTooLarge") {
      return sendError(
        response,
        new ServiceApi.ApiPayloadTooLarge({ error: `the answer is over ${options.maxClientFrameBytes} bytes` })
      )
    }
    if (Either.isLeft(frame) || frame.right._tag !== "Answer") {
      return sendError(
        response,
        new ServiceApi.ApiBadRequest({ error: "expected { event: \"external_resource_granted\", data }" })
      )
    }
    if (answerTooLong(frame.right.data)) {
      return sendError(
        response,
        new ServiceApi.ApiBadRequest({ error: `an answer field is over ${options.maxAnswerFieldLength} characters` })
      )
    }
    const outcome = access.session.answer(frame.right.data)
    if (outcome._tag === "TooMany") {
      return sendError(
        response,
        new ServiceApi.ApiConflict({ error: `the session already has ${outcome.limit} answers (the most it keeps)` })
      )
    }
    response.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ accepted: true }))
  }

  /** Which SSE route a request is for, if any. */
  const routeOf = (request: Http.IncomingMessage): "connect" | "egress" | undefined => {
    const path = (request.url ?? "/").split("?", 1)[0]
    if (request.method === "GET" && path === dialect.sse.connectPath) return "connect"
    if (request.method === "POST" && path === dialect.sse.egressPath) return "egress"
    return undefined
  }

  /** Ends every open channel (the simulator is shutting down). */
  const close = Effect.async<void>((resume) => {
    for (const ws of wss.clients) ws.terminate()
    for (const response of sseResponses) response.destroy()
    sseResponses.clear()
    wss.close(() => resume(Effect.void))
  })

  return { onUpgrade, routeOf, sseConnect, sseEgress, close } as const
}
