/**
 * A real HTTP server on 127.0.0.1 for the create-policy tests of both editions (`paid/createPolicy`; plain Node, no
 * Effect): it ignores idempotency keys, acts on every request (counts what it created), then fails
 * its answer as told, in each way that hides whether it acted.
 */
import * as Http from "node:http"
import type * as Net from "node:net"

/** How the server fails its answer. */
export type Failure = "slow" | "reset" | "502" | "503-then-ok" | "429-then-ok"

/** What a test reads of the server. */
export interface Acting {
  readonly url: string
  /** What the server created (it acted on each of these). */
  readonly created: () => number
  /** The `Idempotency-Key` of each request received. */
  readonly keys: () => ReadonlyArray<string | undefined>
}

/** Starts the server on a free port; `close` drops its connections and stops it. */
export const startActingServer = (
  failure: Failure
): Promise<{ readonly acting: Acting; readonly close: () => Promise<void> }> =>
  new Promise((resolve) => {
    let created = 0
    let received = 0
    const keys: Array<string | undefined> = []
    const sockets = new Set<Net.Socket>()
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        received += 1
        keys.push(req.headers["idempotency-key"] as string | undefined)
        const first = received === 1
        if (failure === "503-then-ok" && first) {
          res.writeHead(503, { "content-type": "application/json", "retry-after": "0" })
          return res.end(JSON.stringify({ error: "busy, nothing done" }))
        }
        if (failure === "429-then-ok" && first) {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "0" })
          return res.end(JSON.stringify({ error: "slow down" }))
        }
        created += 1
        const body = req.url?.includes("onboard")
          ? { agentId: `agt_${created}`, name: "scout", website: "https://example.com", domain: "research", apiKey: "agk_x" }
          : { session_id: `ses_${created}`, status: "running" }
        switch (failure) {
          case "slow":
            setTimeout(() => {
              if (!res.destroyed) {
                res.writeHead(200, { "content-type": "application/json" })
                res.end(JSON.stringify(body))
              }
            }, 1500).unref()
            return
          case "reset":
            return req.socket.destroy()
          case "502":
            res.writeHead(502, { "content-type": "text/plain" })
            return res.end("bad gateway")
          default:
            res.writeHead(200, { "content-type": "application/json" })
            return res.end(JSON.stringify(body))
        }
      })
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        acting: { url: `http://127.0.0.1:${port}`, created: () => created, keys: () => keys },
        close: () =>
          new Promise<void>((done) => {
            sockets.forEach((s) => s.destroy())
            server.close(() => done())
          })
      })
    })
  })
