/**
 * The raw hostile client of the simulator half of the hostile-peer suite: the simulator runs in a
 * child process (`sim-child.ts`) so that a crash is observable, and every request is made with
 * `net`, `http` or `ws` directly (never the SDK), so the bytes are exactly what a test writes.
 */
import { assert } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { WebSocket } from "ws"
import * as Dialect from "../../src/Dialect.js"
import type * as Simulator from "effect-agent-session-simulator/Simulator"

const childPath = Path.join(Path.dirname(Url.fileURLToPath(import.meta.url)), "sim-child.ts")

/** A key that cannot appear by accident. */
export const makeKey = (prefix: string): string => `${prefix}_${Crypto.randomBytes(18).toString("hex")}`

/** The options of a simulator child. */
export interface ChildOptions {
  readonly dialect?: "documented" | "observed"
  readonly ask?: "none" | "input" | "permission"
  readonly limits?: Partial<Simulator.Limits>
}

/** A simulator in a child process. */
export interface SimChild {
  readonly port: number
  readonly accountKey: string
  readonly dialect: Dialect.Dialect
  /** Everything the child wrote to stdout and stderr so far. */
  readonly output: () => string
  /** Whether the process still runs. */
  readonly alive: () => boolean
  /** RSS and heap after a full GC, in bytes. */
  readonly memory: Effect.Effect<{ readonly rss: number; readonly heapUsed: number }>
  /** How many answers the session holds. */
  readonly answers: (sessionId: string) => Effect.Effect<number>
  /** The tags of the session's known script events. */
  readonly script: (sessionId: string) => Effect.Effect<ReadonlyArray<string>>
}

/** The child of a suite. */
export class Child extends Context.Tag("test/hostile/SimChild")<Child, SimChild>() {}

const startChild = (options: ChildOptions) =>
  Effect.gen(function*() {
    const accountKey = makeKey("sk_live")
    const output: Array<string> = []
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.fork(childPath, [], {
          execArgv: ["--import", "tsx", "--expose-gc"],
          env: {
            ...process.env,
            SIM_ACCOUNT_KEY: accountKey,
            SIM_DIALECT: options.dialect ?? "documented",
            SIM_ASK: options.ask ?? "permission",
            SIM_LIMITS: JSON.stringify(options.limits ?? {})
          },
          stdio: ["ignore", "pipe", "pipe", "ipc"]
        })
      ),
      (child) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGTERM")
        })
    )
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
    const port = yield* Effect.async<number>((resume) => {
      const onMessage = (message: { readonly type: string; readonly port: number }) => {
        if (message.type === "ready") {
          child.off("message", onMessage)
          resume(Effect.succeed(message.port))
        }
      }
      child.on("message", onMessage)
      child.once("exit", (code) => resume(Effect.dieMessage(`the simulator exited with ${code}: ${output.join("")}`)))
    }).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("the simulator did not start") }), Effect.orDie)

    // One question at a time: the answer is the next message of the asked type.
    const lock = yield* Effect.makeSemaphore(1)
    const ask = <A>(message: { readonly type: string }, pick: (reply: Record<string, unknown>) => A): Effect.Effect<A> =>
      lock.withPermits(1)(
        Effect.async<A>((resume) => {
          const onMessage = (reply: Record<string, unknown>) => {
            if (reply["type"] === message.type) {
              child.off("message", onMessage)
              resume(Effect.succeed(pick(reply)))
            }
          }
          child.on("message", onMessage)
          child.send(message)
          return Effect.sync(() => child.off("message", onMessage))
        }).pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("no reply") }), Effect.orDie)
      )
    return {
      port,
      accountKey,
      dialect: Dialect.fromName(options.dialect ?? "documented"),
      output: () => output.join(""),
      alive: () => child.exitCode === null && child.signalCode === null,
      memory: ask({ type: "memory" }, (reply) => ({ rss: Number(reply["rss"]), heapUsed: Number(reply["heapUsed"]) })),
      answers: (id: string) => ask({ type: "answers", id } as { readonly type: string }, (reply) => Number(reply["count"])),
      script: (id: string) =>
        ask({ type: "script", id } as { readonly type: string }, (reply) => reply["tags"] as ReadonlyArray<string>)
    } satisfies SimChild
  })

/** A simulator child for the lifetime of a suite. */
export const childLayer = (options: ChildOptions = {}): Layer.Layer<Child> => Layer.scoped(Child, startChild(options))

// ---------------------------------------------------------------------------
// Raw HTTP over `net`
// ---------------------------------------------------------------------------

/** What came back on a raw connection. */
export interface RawResponse {
  /** The status, or 0 when no status line arrived. */
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The whole text received. */
  readonly text: string
  /** The server closed the connection (FIN or reset) within the bound. */
  readonly closed: boolean
  /** The connection was reset (ECONNRESET / EPIPE). */
  readonly reset: boolean
  /** Nothing ended the exchange within the bound. */
  readonly timedOut: boolean
}

const decodeChunked = (text: string): string => {
  let out = ""
  let rest = text
  for (;;) {
    const end = rest.indexOf("\r\n")
    if (end < 0) return out
    const size = parseInt(rest.slice(0, end), 16)
    if (!Number.isFinite(size) || size === 0) return out
    out += rest.slice(end + 2, end + 2 + size)
    rest = rest.slice(end + 2 + size + 2)
  }
}

/** Parses an HTTP/1.1 response. */
export const parseResponse = (text: string): Pick<RawResponse, "status" | "headers" | "body"> => {
  const split = text.indexOf("\r\n\r\n")
  const head = split < 0 ? text : text.slice(0, split)
  const rawBody = split < 0 ? "" : text.slice(split + 4)
  const [statusLine = "", ...lines] = head.split("\r\n")
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? "0")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const body = headers["transfer-encoding"] === "chunked" ? decodeChunked(rawBody) : rawBody
  return { status, headers, body }
}

/**
 * Opens a TCP connection, lets `write` write to it (at once or over time), and collects what comes
 * back until the server closes or `timeoutMs` passes.
 */
export const rawExchange = (
  port: number,
  write: (socket: Net.Socket) => void,
  timeoutMs = 20_000
): Effect.Effect<RawResponse> =>
  Effect.async<RawResponse>((resume) => {
    const chunks: Array<Buffer> = []
    let reset = false
    let done = false
    const socket = Net.connect({ port, host: "127.0.0.1" })
    const finish = (closed: boolean, timedOut: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("latin1")
      socket.destroy()
      resume(Effect.succeed({ ...parseResponse(text), text, closed, reset, timedOut }))
    }
    const timer = setTimeout(() => finish(false, true), timeoutMs)
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", () => {
      reset = true
    })
    socket.on("close", () => finish(true, false))
    socket.on("connect", () => write(socket))
    return Effect.sync(() => finish(false, false))
  })

/** Writes `data` unless the socket is gone (a hostile client does not care about errors). */
export const writeSafely = (socket: Net.Socket, data: string | Buffer): boolean =>
  !socket.destroyed && socket.write(data)

/** A request head (CRLF line endings) for `rawExchange`. */
export const head = (lines: ReadonlyArray<string>): string => `${lines.join("\r\n")}\r\n\r\n`

// ---------------------------------------------------------------------------
// HTTP with `node:http`
// ---------------------------------------------------------------------------

/** An HTTP answer. */
export interface HttpAnswer {
  readonly status: number
  readonly text: string
  readonly json: unknown
  readonly headers: Http.IncomingHttpHeaders
}

/** One HTTP request with `node:http` (a fresh connection each time). */
export const request = (
  port: number,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string | Buffer } = {}
): Effect.Effect<HttpAnswer> =>
  Effect.async<HttpAnswer>((resume) => {
    const req = Http.request(
      { host: "127.0.0.1", port, method, path, agent: false, headers: options.headers },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown = undefined
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resume(Effect.succeed({ status: response.statusCode ?? 0, text, json, headers: response.headers }))
        })
      }
    )
    req.on("error", (error) => resume(Effect.dieMessage(`request failed: ${error.message}`)))
    req.end(options.body)
    return Effect.sync(() => req.destroy())
  }).pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`${method} ${path} hung`) }), Effect.orDie)

/** The auth header of a dialect. */
export const auth = (dialect: Dialect.Dialect, key: string): Record<string, string> =>
  dialect.auth === "bearer" ? { authorization: `Bearer ${key}` } : { "x-api-key": key }

/** A JSON request with a key. */
export const postJson = (child: SimChild, path: string, body: unknown, key = child.accountKey) =>
  request(child.port, "POST", path, {
    headers: { "content-type": "application/json", ...auth(child.dialect, key) },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

/** Creates a session in the child's dialect; its id. */
export const createSession = (child: SimChild, key = child.accountKey, goal = "find the pricing page") =>
  Effect.map(
    postJson(
      child,
      child.dialect.sessionsPath,
      child.dialect.createSessionBody === "observed"
        ? { goal, url: "https://example.com/", max_actions: 5 }
        : { goal, start_url: "https://example.com/", max_actions: 5 },
      key
    ),
    (answer) => {
      assert.strictEqual(answer.status, 200, answer.text)
      const body = answer.json as Record<string, Record<string, unknown> | unknown>
      const id = child.dialect.sessionResponse === "data-envelope"
        ? (body["data"] as Record<string, unknown>)["sessionId"]
        : body["session_id"]
      return String(id)
    }
  )

/** Onboards an agent; its id and key. */
export const onboard = (child: SimChild, name: string) =>
  Effect.map(
    postJson(child, child.dialect.onboardPath, { name, website: "https://example.com", domain: "research" }),
    (answer) => {
      assert.strictEqual(answer.status, 200, answer.text)
      const body = answer.json as Record<string, unknown>
      return { agentId: String(body["agentId"]), apiKey: String(body["apiKey"]) }
    }
  )

/** Asserts that a refusal has the status and a `{ _tag, error }` body. */
export const assertRefusal = (answer: { readonly status: number; readonly json?: unknown; readonly body?: string }, status: number, tag: string) => {
  const json = answer.json ?? (answer.body === undefined ? undefined : safeJson(answer.body))
  assert.strictEqual(answer.status, status, JSON.stringify(json))
  assert.isObject(json)
  const body = json as Record<string, unknown>
  assert.strictEqual(body["_tag"], tag)
  assert.isString(body["error"])
  assert.isAbove(String(body["error"]).length, 0)
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------
// WebSocket with `ws`
// ---------------------------------------------------------------------------

/** What one WebSocket connection saw. */
export interface WsOutcome {
  readonly frames: ReadonlyArray<string>
  /** The close code, or 0 when the upgrade was refused. */
  readonly code: number
  readonly reason: string
  /** The status of a refused upgrade (0 when it was accepted). */
  readonly status: number
  /** The body of a refused upgrade. */
  readonly body: string
  readonly timedOut: boolean
}

/** What a test can do from its callbacks. */
export interface WsControl {
  readonly send: (data: string | Buffer, binary?: boolean) => void
  readonly close: () => void
}

/**
 * Opens a WebSocket to the child and waits for it to close (or for the bound). `onOpen` and
 * `onFrame` may send anything.
 */
export const wsConnect = (
  child: SimChild,
  options: {
    readonly query?: Readonly<Record<string, string>>
    readonly onOpen?: (control: WsControl) => void
    readonly onFrame?: (frame: string, control: WsControl) => void
    readonly timeoutMs?: number
  } = {}
): Effect.Effect<WsOutcome> =>
  Effect.async<WsOutcome>((resume) => {
    const query = new URLSearchParams(options.query ?? {}).toString()
    const ws = new WebSocket(`ws://127.0.0.1:${child.port}${child.dialect.connectPath}${query === "" ? "" : `?${query}`}`)
    const frames: Array<string> = []
    let done = false
    const finish = (outcome: Omit<WsOutcome, "frames">) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(Effect.succeed({ frames, ...outcome }))
    }
    const timer = setTimeout(() => {
      finish({ code: 0, reason: "", status: 0, body: "", timedOut: true })
      ws.terminate()
    }, options.timeoutMs ?? 20_000)
    const control: WsControl = {
      send: (data, binary) => {
        if (ws.readyState === ws.OPEN) ws.send(data, { binary: binary === true })
      },
      close: () => ws.close(1000)
    }
    ws.on("open", () => options.onOpen?.(control))
    ws.on("message", (data) => {
      const text = String(data)
      frames.push(text)
      options.onFrame?.(text, control)
    })
    ws.on("error", () => {})
    ws.on("unexpected-response", (_request, response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        finish({ code: 0, reason: "", status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), timedOut: false })
        ws.terminate()
      })
    })
    ws.on("close", (code, reason) => finish({ code, reason: String(reason), status: 0, body: "", timedOut: false }))
    return Effect.sync(() => ws.terminate())
  })

/** The `message` handshake frame. */
export const handshake = (apiKey: string, sessionId: string): string => JSON.stringify({ apiKey, sessionId })

/** `[[[...]]]` nested `depth` deep. */
export const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`

/** `{"a":{"a":...}}` nested `depth` deep. */
export const nestedObject = (depth: number): string => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`

/** Asserts that no key appears in any of the texts. */
export const assertNoKey = (keys: ReadonlyArray<string>, ...texts: ReadonlyArray<string>) => {
  for (const key of keys) {
    for (const text of texts) {
      assert.isFalse(text.includes(key), "a key appears in a response or a log")
      assert.isFalse(text.includes(key.slice(key.length / 2)), "part of a key appears in a response or a log")
    }
  }
}

/** Asserts that the child runs and still serves a normal request. */
export const assertServes = (child: SimChild) =>
  Effect.gen(function*() {
    assert.isTrue(child.alive(), `the simulator process died: ${child.output()}`)
    const id = yield* createSession(child)
    assert.isAbove(id.length, 0)
  })
