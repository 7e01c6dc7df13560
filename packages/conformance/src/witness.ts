/**
 * The witness: a plain Node HTTP proxy between the SDK and the simulator that records every
 * request it forwards, so that what happened on the wire is read the same way whichever edition
 * sent it (the simulator runs in process for one edition, as a child process for the other).
 * Responses are streamed through as they arrive (Server-Sent Events included); a response the
 * simulator cuts off is cut off for the client too.
 */
import * as Http from "node:http"
import type * as Net from "node:net"

/** One request forwarded, and how it was answered. */
export interface Recorded {
  readonly method: string
  /** The path, without the query string (which may hold a key). */
  readonly path: string
  readonly status: number
  /** The `Idempotency-Key` header, if any. */
  readonly idempotencyKey: string | undefined
  /** The `session_id` of a 2xx JSON answer, if any. */
  readonly sessionId: string | undefined
  /** When the request arrived (`Date.now()`). */
  readonly startedAt: number
  /** When its answer ended. */
  readonly endedAt: number
}

/** A running witness. */
export interface Witness {
  /** Its base URL: `http://127.0.0.1:PORT`, the target's paths below it. */
  readonly url: string
  /** Every request answered so far, in the order their answers ended. */
  readonly recorded: () => ReadonlyArray<Recorded>
  /** Drops its connections and stops it. */
  readonly close: () => Promise<void>
}

/** The most of an answer's body kept to read its `session_id`. */
const keptBytes = 64 * 1024

const sessionIdOf = (body: string): string | undefined => {
  const match = /"session_?[iI]d"\s*:\s*"([^"]+)"/.exec(body)
  return match?.[1]
}

/** Starts a witness on 127.0.0.1, a free port, forwarding to `target` (`http://host:port`). */
export const startWitness = (target: string): Promise<Witness> =>
  new Promise((resolve) => {
    const upstream = new URL(target)
    const recorded: Array<Recorded> = []
    const sockets = new Set<Net.Socket>()
    const server = Http.createServer((req, res) => {
      const startedAt = Date.now()
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      const header = req.headers["idempotency-key"]
      const idempotencyKey = Array.isArray(header) ? header[0] : header
      const forward = Http.request({
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host }
      }, (answer) => {
        const status = answer.statusCode ?? 0
        const kept: Array<Buffer> = []
        let size = 0
        answer.on("data", (chunk: Buffer) => {
          if (size < keptBytes) kept.push(chunk)
          size += chunk.length
        })
        answer.on("end", () => {
          const body = status >= 200 && status < 300 ? Buffer.concat(kept).toString("utf8") : ""
          recorded.push({
            method: req.method ?? "GET",
            path,
            status,
            idempotencyKey,
            sessionId: sessionIdOf(body),
            startedAt,
            endedAt: Date.now()
          })
        })
        // Cut off upstream (a dropped connection): cut off for the client too.
        answer.on("aborted", () => res.destroy())
        answer.on("error", () => res.destroy())
        res.writeHead(status, answer.statusMessage, answer.headers)
        res.flushHeaders()
        answer.pipe(res)
      })
      forward.on("error", () => res.destroy())
      // The client went away: stop the upstream request too.
      res.on("close", () => forward.destroy())
      req.pipe(forward)
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `http://127.0.0.1:${port}`,
        recorded: () => [...recorded],
        close: () =>
          new Promise<void>((done) => {
            sockets.forEach((socket) => socket.destroy())
            server.close(() => done())
          })
      })
    })
  })
