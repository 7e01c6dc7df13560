/**
 * The load generator: a raw `ws` server in its own process, the same for both sides of every
 * comparison. It speaks the documented handshake (the first message is `{apiKey, sessionId}`;
 * a `sessionId` query parameter is accepted too) and serves the scenario the session id names
 * (see `Scenario` in frames.ts). `POST /api/v1sessions` creates a `hold` session (any body, any
 * key), for sessions opened through create-then-connect.
 *
 * Frames are framed once, cached, and written to the TCP socket in one write, so the server is
 * never the bottleneck: the kernel's socket buffer is the only back-pressure, and a client that
 * stops reading stops the server.
 *
 * Run as a child with an IPC channel (it sends `{ type: "ready", port }` and answers
 * `{ type: "count" }` with `{ type: "count", open }`), or by hand: `tsx bench/loadgen.ts [port] [n,n...]`
 * (the frame counts of throughput streams to frame ahead).
 */
import * as Http from "node:http"
import type * as Stream from "node:stream"
import { type WebSocket, WebSocketServer } from "ws"
import { actionRunFrame, afterDropFrame, completeFrame, Scenario, sharedNow, startedFrame } from "effect-agent-session-test-support/frames"

/** A server-to-client WebSocket text frame (unmasked) around a text. */
export const wsTextFrame = (text: string): Buffer => {
  const payload = Buffer.from(text, "utf8")
  const length = payload.byteLength
  let header: Buffer
  if (length < 126) {
    header = Buffer.from([0x81, length])
  } else if (length < 65536) {
    header = Buffer.alloc(4)
    header[0] = 0x81
    header[1] = 126
    header.writeUInt16BE(length, 2)
  } else {
    header = Buffer.alloc(10)
    header[0] = 0x81
    header[1] = 127
    header.writeBigUInt64BE(BigInt(length), 2)
  }
  return Buffer.concat([header, payload])
}

const throughputCache = new Map<number, Buffer>()
const framedRun = (from: number, count: number): Buffer => {
  const parts: Array<Buffer> = []
  for (let i = from; i < from + count; i++) parts.push(wsTextFrame(actionRunFrame(i)))
  return Buffer.concat(parts)
}
const throughputFrames = (n: number): Buffer => {
  let cached = throughputCache.get(n)
  if (cached === undefined) {
    cached = framedRun(0, n)
    throughputCache.set(n, cached)
  }
  return cached
}

const dropAttempts = new Map<string, { attempts: number; droppedAt: number }>()
let open = 0
/** Sessions created (`POST /api/v1sessions`). */
let created = 0

const serve = (ws: WebSocket, socket: Stream.Duplex, sessionId: string): void => {
  const [kind, ...args] = sessionId.split("-")
  switch (kind) {
    case Scenario.throughput: {
      const n = Number(args[0])
      socket.write(throughputFrames(n))
      socket.write(wsTextFrame(completeFrame(sessionId)))
      ws.close(1000)
      return
    }
    case Scenario.hold: {
      ws.send(startedFrame(sessionId))
      return
    }
    case Scenario.drop: {
      const id = args[0] ?? ""
      const k = Number(args[1])
      const drops = Number(args[2])
      const state = dropAttempts.get(id) ?? { attempts: 0, droppedAt: Number.NaN }
      state.attempts++
      dropAttempts.set(id, state)
      const first = (state.attempts - 1) * k
      const frames: Array<Buffer> = []
      if (state.attempts > 1) frames.push(wsTextFrame(afterDropFrame(first, state.droppedAt)))
      frames.push(framedRun(first + frames.length, k - frames.length))
      if (state.attempts <= drops) {
        socket.write(Buffer.concat(frames), () => {
          // An abrupt drop: no close frame (the client sees 1006).
          state.droppedAt = sharedNow()
          socket.destroy()
        })
      } else {
        dropAttempts.delete(id)
        socket.write(Buffer.concat(frames))
        socket.write(wsTextFrame(completeFrame(sessionId)))
        ws.close(1000)
      }
      return
    }
    default:
      ws.close(4000, "unknown scenario")
  }
}

/** Starts the load generator on a port (0: any free port); resolves with the port. */
export const start = (port = 0): Promise<{ readonly port: number; readonly server: Http.Server }> => {
  const server = Http.createServer((req, res) => {
    // The documented create path: a session that holds (the `hold` scenario), so sessions are
    // opened through the SDK's create-then-connect path (`AgentSessions.start`) as users call it.
    if (req.method === "POST" && req.url === "/api/v1sessions") {
      req.resume()
      req.on("end", () => {
        const body = JSON.stringify({ session_id: `${Scenario.hold}-${++created}`, status: "running" })
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
      })
      return
    }
    res.writeHead(404).end()
  })
  const wss = new WebSocketServer({ noServer: true })
  server.on("upgrade", (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      open++
      ws.on("close", () => {
        open--
      })
      ws.on("error", () => undefined)
      const query = new URL(req.url ?? "/", "http://localhost").searchParams.get("sessionId")
      if (query !== null) {
        serve(ws, socket, query)
        return
      }
      ws.once("message", (data) => {
        let sessionId: unknown
        try {
          sessionId = (JSON.parse(String(data)) as { sessionId?: unknown }).sessionId
        } catch {
          sessionId = undefined
        }
        if (typeof sessionId === "string") serve(ws, socket, sessionId)
        else ws.close(4001, "bad handshake")
      })
    })
  })
  server.maxConnections = 100_000
  // Kept-alive connections outlive any pause of a client's pool: a connection the server closes
  // as the client reuses it fails the create with ECONNRESET (not retried: its outcome is unknown).
  server.keepAliveTimeout = 10 * 60_000
  server.headersTimeout = 10 * 60_000 + 1000
  return new Promise((resolve) => {
    server.listen({ port, host: "127.0.0.1", backlog: 4096 }, () => {
      const address = server.address()
      resolve({ port: typeof address === "object" && address !== null ? address.port : port, server })
    })
  })
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))
if (isMain) {
  // Frame the throughput streams the run will ask for before saying ready, so no round pays for it.
  for (const n of (process.argv[3] ?? "").split(",").filter((s) => s !== "")) throughputFrames(Number(n))
  void start(Number(process.argv[2] ?? 0)).then(({ port }) => {
    if (process.send !== undefined) {
      process.send({ type: "ready", port })
      process.on("message", (message: { type?: string }) => {
        if (message.type === "count") process.send?.({ type: "count", open })
      })
      process.on("disconnect", () => process.exit(0))
    } else {
      console.log(`load generator on ws://127.0.0.1:${port}`)
    }
  })
}
