/**
 * Raw clients for the simulator's tests: `fetch` for HTTP, the `ws` package for the WebSocket,
 * `fetch` streaming for SSE. They see exactly what goes over the loopback socket.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { WebSocket } from "ws"
import type * as Dialect from "effect-agent-session/Dialect"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import type { Simulator } from "../src/index.js"
import * as Wire from "effect-agent-session/Wire"

/** An HTTP answer. */
export interface HttpAnswer {
  readonly status: number
  readonly body: unknown
  readonly text: string
  readonly headers: Headers
}

/** The auth header of a dialect for a key. */
export const authHeader = (dialect: Dialect.Dialect, key: string): Record<string, string> =>
  dialect.auth === "bearer" ? { authorization: `Bearer ${key}` } : { "x-api-key": key }

/** Sends one HTTP request to the simulator. */
export const http = (
  sim: Simulator.Service,
  method: string,
  path: string,
  options: {
    readonly body?: unknown
    readonly rawBody?: string | undefined
    readonly headers?: Record<string, string>
  } = {}
): Effect.Effect<HttpAnswer> =>
  Effect.promise(async () => {
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    const response = await fetch(`${sim.baseUrl}${path}`, {
      method,
      headers: { "content-type": "application/json", ...options.headers },
      ...(body === undefined ? {} : { body })
    })
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, body: json, text, headers: response.headers }
  })

/** Reads a field of a JSON body. */
export const field = (body: unknown, ...path: ReadonlyArray<string>): unknown => {
  let value: unknown = body
  for (const key of path) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined
  }
  return value
}

/** Onboards an agent with the account key; returns its id and key. */
export const onboard = (sim: Simulator.Service, name: string) =>
  Effect.map(
    http(sim, "POST", sim.dialect.onboardPath, {
      body: { name, website: "https://example.com", domain: "research" },
      headers: authHeader(sim.dialect, sim.accountKey)
    }),
    (answer) => ({ agentId: String(field(answer.body, "agentId")), apiKey: String(field(answer.body, "apiKey")) })
  )

/** Creates a session in the simulator's dialect; returns its id. */
export const createSession = (
  sim: Simulator.Service,
  options: { readonly key?: string; readonly goal?: string; readonly maxActions?: number } = {}
) =>
  Effect.map(
    http(sim, "POST", sim.dialect.sessionsPath, {
      body: sim.dialect.createSessionBody === "observed"
        ? { goal: options.goal ?? "find the pricing page", url: "https://example.com/", max_actions: options.maxActions ?? 20 }
        : {
          goal: options.goal ?? "find the pricing page",
          start_url: "https://example.com/",
          max_actions: options.maxActions ?? 20
        },
      headers: authHeader(sim.dialect, options.key ?? sim.accountKey)
    }),
    (answer) =>
      String(
        sim.dialect.sessionResponse === "data-envelope"
          ? field(answer.body, "data", "sessionId")
          : field(answer.body, "session_id")
      )
  )

/** What one WebSocket connection saw. */
export interface WsRun {
  readonly frames: ReadonlyArray<string>
  readonly code: number
  readonly reason: string
}

/** How a test client opens the channel. */
export interface Connect {
  readonly sessionId: string
  readonly apiKey: string
  /** `message` sends `{apiKey, sessionId}` first; `query` puts them in the address. */
  readonly handshake: "message" | "query"
  /** Called once the handshake is sent. */
  readonly onOpen?: (client: Client) => void
  /** Called on every text frame. */
  readonly onFrame?: (frame: string, client: Client) => void
}

/** What a test client can do from its callbacks. */
export interface Client {
  readonly send: (text: string) => void
  /** Closes the connection from the client's side with 1000. */
  readonly close: () => void
}

/** Opens one WebSocket connection and waits for it to close. */
export const connectOnce = (sim: Simulator.Service, options: Connect): Effect.Effect<WsRun> =>
  Effect.async<WsRun>((resume_) => {
    let done = false
    const resume = (effect: Effect.Effect<WsRun>) => {
      if (!done) {
        done = true
        resume_(effect)
      }
    }
    const base = `${sim.wsUrl}${sim.dialect.connectPath}`
    const url = options.handshake === "query"
      ? `${base}?sessionId=${encodeURIComponent(options.sessionId)}&apiKey=${encodeURIComponent(options.apiKey)}`
      : base
    const ws = new WebSocket(url)
    const frames: Array<string> = []
    const client: Client = { send: (text) => ws.send(text), close: () => ws.close(1000) }
    ws.on("open", () => {
      if (options.handshake === "message") {
        ws.send(JSON.stringify({ apiKey: options.apiKey, sessionId: options.sessionId }))
      }
      options.onOpen?.(client)
    })
    ws.on("message", (data) => {
      const text = String(data)
      frames.push(text)
      options.onFrame?.(text, client)
    })
    ws.on("error", () => {})
    ws.on("unexpected-response", (_request, response) => {
      resume(Effect.succeed({ frames, code: -(response.statusCode ?? 0), reason: "unexpected response" }))
      ws.terminate()
    })
    ws.on("close", (code, reason) => resume(Effect.succeed({ frames, code, reason: String(reason) })))
    return Effect.sync(() => ws.terminate())
  })

/** The status of a refused upgrade (the handshake was answered with HTTP, not 101). */
export const upgradeStatus = (run: WsRun): number => (run.code < 0 ? -run.code : 0)

/**
 * Connects until the session ends normally (or `maxConnections` is reached), reconnecting after
 * every abnormal close like a resuming client. Returns every connection's run.
 */
export const connectUntilDone = (
  sim: Simulator.Service,
  options: Connect & { readonly maxConnections?: number }
): Effect.Effect<ReadonlyArray<WsRun>> =>
  Effect.gen(function*() {
    const runs: Array<WsRun> = []
    const max = options.maxConnections ?? 10
    while (runs.length < max) {
      const run = yield* connectOnce(sim, options)
      runs.push(run)
      if (run.code === 1000 || run.code === 1008 || run.code === 1011 || run.code < 0) break
    }
    return runs
  })

/** Decodes frames with the SDK's codec: events, failing on a frame that does not decode. */
export const decodeAll = (
  framing: Dialect.Framing,
  frames: ReadonlyArray<string>
): ReadonlyArray<Either.Either<SessionEvent.SessionEvent, string>> =>
  frames.map((frame) =>
    Either.mapLeft(Wire.decodeFrame(framing, frame, { maxFrameSize: 1024 * 1024 }), (error) => error._tag)
  )

/** The decoded events of frames, without the observed dialect's `connected`/`heartbeat`. */
export const scriptedEvents = (
  framing: Dialect.Framing,
  frames: ReadonlyArray<string>
): ReadonlyArray<SessionEvent.SessionEvent> =>
  decodeAll(framing, frames).flatMap((result) =>
    Either.isRight(result) && result.right._tag !== "Heartbeat" && result.right._tag !== "Connected"
      ? [result.right]
      : []
  )

/** The answer frame a client sends, keyed `event` or `type`. */
export const answerFrame = (
  key: "event" | "type",
  data: { readonly granted: boolean; readonly resource_type: string; readonly input?: string }
): string => JSON.stringify({ [key]: "external_resource_granted", data })

/** One SSE event as the stream carries it. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

/** What one SSE connection saw: its status, its events, and whether it ended abruptly. */
export interface SseRun {
  readonly status: number
  readonly events: ReadonlyArray<SseEvent>
  readonly aborted: boolean
}

const parseSse = (text: string): Array<SseEvent> =>
  text.split("\n\n").filter((block) => block.trim().length > 0).map((block) => {
    let event = "message"
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7)
      else if (line.startsWith("data: ")) data.push(line.slice(6))
    }
    return { event, data: data.join("\n") }
  })

/** Opens the SSE stream of a session and reads it to its end. */
export const sseOnce = (
  sim: Simulator.Service,
  options: {
    readonly sessionId: string
    readonly apiKey: string
    readonly onEvent?: (event: SseEvent) => void
  }
): Effect.Effect<SseRun> =>
  Effect.promise(async () => {
    const url = `${sim.baseUrl}${sim.dialect.sse.connectPath}?sessionId=${encodeURIComponent(options.sessionId)}&apiKey=${
      encodeURIComponent(options.apiKey)
    }`
    const response = await fetch(url)
    if (response.status !== 200 || response.body === null) {
      await response.text()
      return { status: response.status, events: [], aborted: false }
    }
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    const events: Array<SseEvent> = []
    let aborted = false
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch {
        aborted = true
        break
      }
      if (chunk.done) break
      buffer += decoder.decode(chunk.value, { stream: true })
      const end = buffer.lastIndexOf("\n\n")
      if (end >= 0) {
        for (const event of parseSse(buffer.slice(0, end + 2))) {
          events.push(event)
          options.onEvent?.(event)
        }
        buffer = buffer.slice(end + 2)
      }
    }
    return { status: response.status, events, aborted }
  })
