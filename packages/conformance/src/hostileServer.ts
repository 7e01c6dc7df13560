/**
 * A small scriptable hostile server (HTTP, WebSocket, Server-Sent Events) on loopback, port 0,
 * that an edition's SDK is pointed at: each case scripts what the peer does (never-ending bodies,
 * frames announcing 200 MB, close codes, keys echoed everywhere, ...). It records what it saw and
 * can say how many TCP connections are still open, so a case can prove nothing was left behind.
 * Plain Node and `ws`, no Effect: each edition's runner wraps `startHostileServer` in its scope.
 *
 * Also the pieces of hostile behaviour the cases share: raw WebSocket frames written on the TCP
 * socket (a frame header can announce any length), endless and trickling bodies, and the
 * process-level checks (the live heap, the handles left).
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { type WebSocket, WebSocketServer } from "ws"

/** What the server saw of one HTTP request (upgrades included). */
export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
  /**
   * Of a plain HTTP request: how many milliseconds after it arrived its response was done with
   * (sent whole, or its connection closed by either side); unset while it is still open.
   */
  closedAfterMs?: number
}

/** What a case scripts. Every handler is optional: by default HTTP is 404 and upgrades are refused. */
export interface Script {
  /** Answers a plain HTTP request (SSE `GET`s and answer `POST`s included). */
  readonly http?: (request: Http.IncomingMessage, response: Http.ServerResponse, index: number) => void
  /** Drives an accepted WebSocket (`ws` does the upgrade). */
  readonly ws?: (socket: WebSocket, request: Http.IncomingMessage, index: number) => void
  /** Handles the raw upgrade itself (refusals, raw frames): it owns the TCP socket. */
  readonly upgrade?: (request: Http.IncomingMessage, socket: Net.Socket, head: Buffer, index: number) => void
}

/** The running server. */
export interface HostileServer {
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string
  /** `ws://127.0.0.1:<port>` */
  readonly wsUrl: string
  /** Every request seen, upgrades included, in order. */
  readonly requests: ReadonlyArray<SeenRequest>
  /** Upgrade requests seen. */
  readonly upgrades: () => number
  /** TCP connections open now (the SDK's sockets as the server sees them). */
  readonly openConnections: () => number
  /** Waits (polling, real time) until no TCP connection is open, up to `timeoutMs`; how many remain. */
  readonly drained: (timeoutMs?: number) => Promise<number>
  /** Closes the server, every socket destroyed. */
  readonly close: () => Promise<void>
}

/** Starts a hostile server on 127.0.0.1, a free port. */
export const startHostileServer = (script: Script): Promise<HostileServer> =>
  new Promise((resolve) => {
    const requests: Array<SeenRequest> = []
    const sockets = new Set<Net.Socket>()
    let upgrades = 0
    let httpCount = 0
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 })
    const server = Http.createServer((request, response) => {
      const seen: SeenRequest = { method: request.method ?? "", url: request.url ?? "", headers: request.headers }
      const arrived = Date.now()
      requests.push(seen)
      response.on("close", () => {
        seen.closedAfterMs = Date.now() - arrived
      })
      const index = httpCount++
      response.on("error", () => {})
      request.on("error", () => {})
      if (script.http === undefined) {
        response.writeHead(404).end()
        return
      }
      script.http(request, response, index)
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => {})
    })
    server.on("clientError", (_error, socket) => socket.destroy())
    server.on("upgrade", (request: Http.IncomingMessage, socket: Net.Socket, head: Buffer) => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers })
      const index = upgrades++
      socket.on("error", () => {})
      // The HTTP server allows half-open sockets: a client that hangs up is hung up on.
      socket.on("end", () => socket.end())
      if (script.upgrade !== undefined) return script.upgrade(request, socket, head, index)
      if (script.ws === undefined) {
        socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
      }
      const onSocket = script.ws
      wss.handleUpgrade(request, socket, head, (ws) => {
        ws.on("error", () => ws.terminate())
        onSocket(ws, request, index)
      })
    })
    const drained = async (timeoutMs = 10_000): Promise<number> => {
      const deadline = Date.now() + timeoutMs
      while (sockets.size > 0 && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 10))
      }
      return sockets.size
    }
    const close = (): Promise<void> =>
      new Promise((done) => {
        for (const client of wss.clients) client.terminate()
        for (const socket of sockets) socket.destroy()
        wss.close()
        server.close(() => done())
      })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        port,
        baseUrl: `http://127.0.0.1:${port}`,
        wsUrl: `ws://127.0.0.1:${port}`,
        requests,
        upgrades: () => upgrades,
        openConnections: () => sockets.size,
        drained,
        close
      })
    })
  })

// ---------------------------------------------------------------------------
// Hostile behaviours
// ---------------------------------------------------------------------------

/**
 * Writes `chunk` forever (respecting back-pressure) until the peer goes away: a body that never
 * ends. Headers must have been written (or are written with `status` and `headers` here).
 */
export const endless = (
  response: Http.ServerResponse,
  chunk: Buffer | string,
  status = 200,
  headers: Http.OutgoingHttpHeaders = {}
): void => {
  if (!response.headersSent) response.writeHead(status, headers)
  const pump = (): void => {
    while (!response.destroyed && !response.writableEnded) {
      if (!response.write(chunk)) {
        response.once("drain", pump)
        return
      }
    }
  }
  response.on("close", () => response.removeListener("drain", pump))
  pump()
}

/** Writes one small chunk every `everyMs` forever: a body that trickles and never ends. */
export const trickle = (
  response: Http.ServerResponse,
  chunk: string,
  everyMs: number,
  status = 200,
  headers: Http.OutgoingHttpHeaders = {}
): void => {
  response.writeHead(status, headers)
  response.flushHeaders()
  const timer = setInterval(() => {
    if (response.destroyed) clearInterval(timer)
    else response.write(chunk)
  }, everyMs)
  response.on("close", () => clearInterval(timer))
}

/** Completes a WebSocket upgrade by hand: the socket then carries raw frames the case writes. */
export const acceptUpgrade = (request: Http.IncomingMessage, socket: Net.Socket): void => {
  const key = request.headers["sec-websocket-key"] ?? ""
  const accept = Crypto.createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64")
  socket.write(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`
  )
}

/** Refuses an upgrade with a status, a status text, headers and a body, all chosen by the case. */
export const refuseUpgrade = (
  socket: Net.Socket,
  status: number,
  statusText: string,
  headers: Record<string, string> = {},
  body = ""
): void => {
  const lines = Object.entries({ "content-length": String(Buffer.byteLength(body)), connection: "close", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`).join("")
  socket.end(`HTTP/1.1 ${status} ${statusText}\r\n${lines}\r\n${body}`)
}

/**
 * The header of an unmasked server frame (opcode 1 text, 2 binary, 8 close) announcing
 * `length` bytes of payload, whatever follows.
 */
export const frameHeader = (length: number, opcode = 1, fin = true): Buffer => {
  const first = (fin ? 0x80 : 0) | opcode
  if (length < 126) return Buffer.from([first, length])
  if (length < 65536) {
    const header = Buffer.alloc(4)
    header[0] = first
    header[1] = 126
    header.writeUInt16BE(length, 2)
    return header
  }
  const header = Buffer.alloc(10)
  header[0] = first
  header[1] = 127
  header.writeBigUInt64BE(BigInt(length), 2)
  return header
}

/** A whole unmasked server frame. */
export const rawFrame = (payload: Buffer | string, opcode = 1): Buffer => {
  const bytes = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload
  return Buffer.concat([frameHeader(bytes.length, opcode), bytes])
}

/** A close frame with a code and a reason. */
export const closeFrame = (code: number, reason = ""): Buffer => {
  const reasonBytes = Buffer.from(reason, "utf8")
  const payload = Buffer.alloc(2 + reasonBytes.length)
  payload.writeUInt16BE(code, 0)
  reasonBytes.copy(payload, 2)
  return rawFrame(payload, 8)
}

/** JSON nested `depth` arrays deep around `leaf`. */
export const deepJson = (depth: number, leaf = "0"): string => "[".repeat(depth) + leaf + "]".repeat(depth)

// ---------------------------------------------------------------------------
// What the process holds
// ---------------------------------------------------------------------------

/** The live heap after a collection, in bytes; `undefined` when the process was not started with `--expose-gc`. */
export const liveHeap = (): number | undefined => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return undefined
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** The process's handles by kind (sockets, timers) now. */
export const handles = (): Readonly<Record<string, number>> => {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/**
 * Waits (real time, polling) until the process holds no more sockets and timers than `before`,
 * up to `timeoutMs`; returns what is left over.
 */
export const handlesBackTo = async (
  before: Readonly<Record<string, number>>,
  timeoutMs = 10_000
): Promise<Readonly<Record<string, number>>> => {
  const deadline = Date.now() + timeoutMs
  const extra = () => {
    const now = handles()
    const out: Record<string, number> = {}
    for (const kind of ["TCPSocketWrap", "Timeout", "TCPWRAP"]) {
      const delta = (now[kind] ?? 0) - (before[kind] ?? 0)
      if (delta > 0) out[kind] = delta
    }
    return out
  }
  while (Object.keys(extra()).length > 0 && Date.now() < deadline) {
    await new Promise((wake) => setTimeout(wake, 20))
  }
  return extra()
}
