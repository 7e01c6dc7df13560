/**
 * A scripted service of the documented dialect for the command line's tests, on port 0 over real
 * sockets: it answers the create request as told (any status and body, now, late or never) and
 * sends the given frames on the event channel, recording every create request it received.
 */
import * as Http from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { WebSocketServer } from "ws"

/** How the service answers the create request. */
export interface CreateAnswer {
  readonly status: number
  readonly body: unknown
  /** Milliseconds before the answer; `"never"` keeps the request waiting. */
  readonly delayMs?: number | "never"
}

/** A create request as the service saw it. */
export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** The running service. */
export interface ScriptedService {
  readonly baseUrl: string
  readonly wsUrl: string
  /** The HTTP requests received so far (their bodies read in full). */
  readonly requests: () => ReadonlyArray<SeenRequest>
  /** Waits until the service has received `count` requests (their heads), or dies after `timeoutMs`. */
  readonly received: (count: number, timeoutMs?: number) => Effect.Effect<void>
}

/**
 * Starts the service: `create` answers `POST` requests; `frames` (objects are sent as JSON, strings
 * as they are) go to each event channel after its first message (the handshake); then the socket
 * stays open.
 */
export const scriptedService = (options: {
  readonly create: CreateAnswer
  readonly frames?: ReadonlyArray<unknown>
}): Effect.Effect<ScriptedService, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly service: ScriptedService; readonly server: Http.Server; readonly timers: Set<NodeJS.Timeout> }>(
      (resume) => {
        const seen: Array<SeenRequest> = []
        let heads = 0
        const timers = new Set<NodeJS.Timeout>()
        const server = Http.createServer((request, response) => {
          heads += 1
          let body = ""
          request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
          request.on("end", () => {
            seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body })
            const answer = () => {
              response.writeHead(options.create.status, { "content-type": "application/json" })
              response.end(typeof options.create.body === "string" ? options.create.body : JSON.stringify(options.create.body))
            }
            const delay = options.create.delayMs ?? 0
            if (delay === "never") return
            if (delay <= 0) return answer()
            const timer = setTimeout(() => {
              timers.delete(timer)
              answer()
            }, delay)
            timers.add(timer)
          })
        })
        const wss = new WebSocketServer({ server, path: "/v1/connect" })
        wss.on("connection", (socket) => {
          socket.once("message", () => {
            for (const frame of options.frames ?? []) socket.send(typeof frame === "string" ? frame : JSON.stringify(frame))
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          const received = (count: number, timeoutMs = 20_000) =>
            Effect.gen(function*() {
              const started = Date.now()
              while (heads < count) {
                if (Date.now() - started > timeoutMs) return yield* Effect.dieMessage(`the service received ${heads} requests`)
                yield* Effect.sleep(20)
              }
            })
          resume(Effect.succeed({
            service: {
              baseUrl: `http://127.0.0.1:${port}`,
              wsUrl: `ws://127.0.0.1:${port}`,
              requests: () => seen,
              received
            },
            server,
            timers
          }))
        })
      }
    ),
    ({ server, timers }) =>
      Effect.async<void>((resume) => {
        for (const timer of timers) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ service }) => service))
