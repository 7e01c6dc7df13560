/**
 * The hostile-server cases: what a broken or malicious peer does (never-ending, huge, slow and
 * deep bodies, invalid UTF-8, keys echoed in every field it controls, redirects, absurd
 * `Retry-After`, frames announcing hundreds of megabytes, every close code, answers in flight as
 * it closes, upgrades that never complete, interruption at random points), and what an edition
 * must do about it. Each case is data: the server's script (plain Node functions over
 * `hostileServer.ts`), how the edition's client is set up, what it does (create a session, get
 * one, read a session's events, answer its requests, run it, ...), and what must hold: the error
 * tag and fields, the key absent from every text a caller can see, a bound on time and on the
 * live heap where the case has one, nothing left open. Each edition's runner maps the act to its
 * API and records what it saw; `hostileVerdict` judges it, once for both.
 */
import type * as Http from "node:http"
import * as Util from "node:util"
import {
  acceptUpgrade,
  closeFrame,
  deepJson,
  endless,
  frameHeader,
  handlesBackTo,
  type HostileServer,
  rawFrame,
  refuseUpgrade,
  type Script,
  startHostileServer,
  trickle
} from "./hostileServer.js"
import { failed, json } from "./observe.js"
import type { Ending, SeenEvent } from "./verdict.js"

/** The key the SDK holds; the hostile server echoes it everywhere it can. */
export const hostileKey = "sk-hostile-SECRET-7f3a9c21e0"

/** The session the SDK attaches to (it is never created). */
export const hostileSession = "hostile-session"

/** The session every create asks for. */
export const hostileRequest = { start_url: "https://example.com/", goal: "find the price", max_actions: 5 }

/** The session `getSession` asks for. */
export const hostileGetSession = "s-1"

/** What a grant answers. */
export const hostileGrantInput = "someone@example.com"

/** A retry schedule: at most `times` more tries, `spacingMs` apart. */
export interface Retry {
  readonly times: number
  readonly spacingMs: number
}

/**
 * How the runner sets up its edition's whole SDK (`NodeAgentSessions.layer`, the key
 * `hostileKey`, the server's base and WebSocket URLs). Unset: the defaults below.
 */
export interface HostileClient {
  /** The event channel's transport (default `websocket`). */
  readonly transport?: "websocket" | "sse"
  /** The dialect (default `documented`). */
  readonly dialect?: "documented" | "observed"
  readonly http?: {
    /** Default: no retry. */
    readonly retry?: Retry
    /** Default: 5000. */
    readonly timeoutMs?: number
    readonly maxResponseSize?: number
    readonly createPolicy?: "safe" | "idempotent"
    readonly maxRetryAfterMs?: number
  }
  readonly events?: {
    /** Default: 3 more tries, 20 ms apart. */
    readonly reconnect?: Retry
    /** Default: the edition's. */
    readonly firstConnect?: Retry
    /** Default: 3000. */
    readonly connectTimeoutMs?: number
    readonly idleTimeoutMs?: number
    readonly answerTimeoutMs?: number
    readonly maxFrameSize?: number
    readonly failOnFrameError?: boolean
    readonly strict?: boolean
  }
}

/** The client's defaults. */
export const hostileDefaults = {
  http: { retry: { times: 0, spacingMs: 0 }, timeoutMs: 5000 },
  events: { reconnect: { times: 3, spacingMs: 20 }, connectTimeoutMs: 3000 }
} as const

/** How a request for a resource is answered. */
export type HostileAnswer = "deny" | "grant"

/** What the SDK does, through the edition's API. */
export type HostileAct =
  /** `AgentApi.createSession(hostileRequest)`. */
  | { readonly _tag: "CreateSession" }
  /** `AgentApi.getSession(hostileGetSession)`. */
  | { readonly _tag: "GetSession" }
  /** `EventStream.events(hostileSession)` to its end; the events are `result.events`. */
  | { readonly _tag: "Events" }
  /**
   * `EventStream.connect(hostileSession)`, every request answered in a fiber; once the server has
   * an answer `POST`, `connection.close` (`result.closeMillis`: how long it took), the answering
   * fiber joined, then `result.state`.
   */
  | { readonly _tag: "AnswerThenClose"; readonly answer: HostileAnswer }
  /**
   * `EventStream.connect(hostileSession)`, every request answered in a fiber; once the server has
   * `posts` answer `POST`s and `thenMs` more passed, `result.state`; then the connection's scope
   * closes (the answering fiber with it).
   */
  | { readonly _tag: "AnswerUntil"; readonly answer: HostileAnswer; readonly posts: number; readonly thenMs: number }
  /** `EventStream.connect(hostileSession)`, every request answered until the events end; then `result.state`. */
  | { readonly _tag: "AnswerToEnd"; readonly answer: HostileAnswer }
  /** `AgentSessions.run(hostileRequest)`, every request answered; the outcome's events are `result.events`. */
  | { readonly _tag: "Run"; readonly answer: HostileAnswer }
  /** `AgentApi.createSession` forked and interrupted after each delay in turn (`delays`). */
  | { readonly _tag: "InterruptCreates"; readonly delays: ReadonlyArray<number> }
  /** `EventStream.events(hostileSession)` drained in a fiber, interrupted after each delay in turn. */
  | { readonly _tag: "SubscribeAndDrop"; readonly delays: ReadonlyArray<number> }

/** A connection's state as the suite records it. */
export interface StateSeen {
  readonly tag: string
  /** `Closed`'s reason. */
  readonly reason?: string
  /** `Closed`'s unsent answers. */
  readonly unsent?: ReadonlyArray<{ readonly actionSessionId: string; readonly resourceType: string }>
}

/** What must hold. Each member but `ending` optional: unset is not checked. */
export interface HostileExpectation {
  /** `ok`, a failure's tag, or the tags either of which may end it. */
  readonly ending: string | ReadonlyArray<string>
  /** Fields of the failure (`message` among them) equal to these. */
  readonly fields?: Readonly<Record<string, string | number | boolean>>
  /** Fields of the failure whose text contains this. */
  readonly includes?: Readonly<Record<string, string>>
  /** Fields of the failure whose text does not contain this. */
  readonly excludes?: Readonly<Record<string, string>>
  /** Fields of the failure whose text is at most this long. */
  readonly atMost?: Readonly<Record<string, number>>
  /** The failure's `size` is above its `limit`. */
  readonly sizeOverLimit?: boolean
  /** The failure's request id (scrubbed). */
  readonly requestId?: string
  /** Every `POST` the server received carried the failure's `idempotencyKey`. */
  readonly sameIdempotencyKey?: boolean
  /** How many requests of a method the server received (exactly, or a range). */
  readonly requests?: { readonly method: "GET" | "POST"; readonly count: number }
  /**
   * Every answer `POST`'s response was done with (its body ended, or its connection closed)
   * within this many milliseconds of the `POST`'s arrival: the SDK released what it did not read.
   */
  readonly postsReleasedWithinMs?: number
  /** How many upgrades the server saw: exactly, or a range. */
  readonly upgrades?: number | { readonly atLeast: number; readonly atMost: number }
  /** How many requests the redirect's target received. */
  readonly elsewhere?: number
  /** The act took less than this (a bound on time). */
  readonly millisBelow?: number
  /** The act took at least this (it waited out a time-out). */
  readonly millisAtLeast?: number
  /** `connection.close` took less than this. */
  readonly closeMillisBelow?: number
  /** The connection's state; `unsentOnly`: every unsent answer is for this action session. */
  readonly state?: StateSeen & { readonly unsentOnly?: string }
  /** An event of this tag whose text contains this. */
  readonly event?: { readonly tag: string; readonly includes: string }
  /** The outcome kept this many events, the last of this tag. */
  readonly outcome?: { readonly events: number; readonly last: string }
  /** The live heap (after a collection) grew by less than this many MiB. */
  readonly heapMiB?: number
  /** Spans were recorded (and so their names and attributes are among the texts checked for the key). */
  readonly spansRecorded?: boolean
  /** The server has no connection open afterwards (within 10 s). */
  readonly drained?: boolean
  /** The process holds no more sockets and timers than before (within 10 s). */
  readonly handlesBack?: boolean
}

/** A hostile case. */
export interface HostileCase {
  /** The test's name: what it shows. */
  readonly name: string
  /** What it proves (defects of the hostile review, U-ids, issues). */
  readonly proves: ReadonlyArray<string>
  /** The server's script, made afresh for each run; `elsewhere` is the URL of the redirect's target. */
  readonly script: (context: { readonly elsewhere: string }) => Script
  /** A second server, the target of a redirect: it must receive nothing. */
  readonly elsewhere?: Script
  readonly client: HostileClient
  readonly act: HostileAct
  /** How many times the case is run, each with a fresh server (default 1). */
  readonly runs?: number
  /** Past this, the runner fails the case instead of hanging (default 30 000). */
  readonly guardMs?: number
  readonly expect: HostileExpectation
}

/** What the act returned. */
export interface ActResult {
  readonly closeMillis?: number
  readonly state?: StateSeen
  readonly events?: ReadonlyArray<SeenEvent>
}

/** A text a caller could see, and where. */
export interface SeenText {
  readonly where: string
  readonly text: string
}

/** What the server (and the process) showed afterwards. */
export interface ServerSeen {
  /** Each request's method and `Idempotency-Key`, upgrades included (method `GET`). */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly idempotencyKey?: string; readonly closedAfterMs?: number }>
  readonly upgrades: number
  /** The redirect target's requests. */
  readonly elsewhere?: number
  /** Connections still open after up to 10 s (when the case expects none). */
  readonly openAfter?: number
  /** Sockets and timers the process holds more than before (when the case expects none). */
  readonly handlesLeft?: Readonly<Record<string, number>>
}

/** What a runner observed of one run of a case. */
export interface HostileObservation {
  /** `Ok`, or the failure (`hostileFailed`). */
  readonly ending: { readonly _tag: "Ok" } | Ending
  readonly result?: ActResult
  readonly millis: number
  /** Every text a caller could see: the outcome and its cause rendered, each log line, each span. */
  readonly texts: ReadonlyArray<SeenText>
  /** The spans recorded, with the names of their attributes. */
  readonly spans: ReadonlyArray<{ readonly name: string; readonly attributes: ReadonlyArray<string> }>
  /** How much the live heap grew, in bytes (undefined: not measured, no `--expose-gc`). */
  readonly heapGrowth?: number
  readonly server: ServerSeen
}

// ---------------------------------------------------------------------------
// What runners share
// ---------------------------------------------------------------------------

/** A failure as the hostile suite records it: `failed`, with its message and its request id among its fields. */
export const hostileFailed = (error: { readonly _tag: string; readonly message: string }): Ending => {
  const ending = failed(error)
  if (ending._tag !== "Failed") return ending
  const requestId: unknown = (error as { readonly requestId?: unknown }).requestId
  const id = typeof requestId === "object" && requestId !== null && (requestId as { _tag?: unknown })._tag === "Some"
    ? (requestId as { value?: unknown }).value
    : undefined
  return {
    ...ending,
    fields: { ...ending.fields, message: error.message, ...(typeof id === "string" ? { requestId: id } : {}) }
  }
}

/** Every rendering of a value a caller might print. */
export const renderings = (value: unknown): ReadonlyArray<string> => {
  const out = [Util.inspect(value, { depth: 10 }), json(value)]
  if (value instanceof Error) out.push(String(value), value.message, value.stack ?? "")
  return out
}

/** Pseudo-random delays (0 to `maxMs` - 1) from `seed`: every run the same. */
export const seededDelays = (seed: number, count: number, maxMs: number): ReadonlyArray<number> => {
  let state = seed
  return Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return Math.floor((state / 2147483648) * maxMs)
  })
}

/** The servers of one run of a case. */
export interface StartedCase {
  readonly server: HostileServer
  readonly elsewhere?: HostileServer
  readonly close: () => Promise<void>
}

/** Starts the servers of one run of a case (the redirect's target first). */
export const startHostileCase = async (hostile: HostileCase): Promise<StartedCase> => {
  const elsewhere = hostile.elsewhere === undefined ? undefined : await startHostileServer(hostile.elsewhere)
  const server = await startHostileServer(hostile.script({ elsewhere: elsewhere?.baseUrl ?? "http://127.0.0.1:1" }))
  return {
    server,
    ...(elsewhere === undefined ? {} : { elsewhere }),
    close: async () => {
      await server.close()
      await elsewhere?.close()
    }
  }
}

/** Waits (real time) until the server has received `posts` answer `POST`s. */
export const untilPosts = async (server: HostileServer, posts: number): Promise<void> => {
  while (server.requests.filter((request) => request.method === "POST").length < posts) {
    await new Promise((wake) => setTimeout(wake, 10))
  }
}

/** What the server and the process show after the act (waiting for what the case expects to close). */
export const serverSeen = async (
  hostile: HostileCase,
  started: StartedCase,
  handlesBefore: Readonly<Record<string, number>>
): Promise<ServerSeen> => {
  const openAfter = hostile.expect.drained === true ? await started.server.drained() : undefined
  const handlesLeft = hostile.expect.handlesBack === true ? await handlesBackTo(handlesBefore) : undefined
  return {
    requests: started.server.requests.map((request) => {
      const key = request.headers["idempotency-key"]
      return {
        method: request.method,
        ...(typeof key === "string" ? { idempotencyKey: key } : {}),
        ...(request.closedAfterMs === undefined ? {} : { closedAfterMs: request.closedAfterMs })
      }
    }),
    upgrades: started.server.upgrades(),
    ...(started.elsewhere === undefined ? {} : { elsewhere: started.elsewhere.requests.length }),
    ...(openAfter === undefined ? {} : { openAfter }),
    ...(handlesLeft === undefined ? {} : { handlesLeft })
  }
}

// ---------------------------------------------------------------------------
// The verdict
// ---------------------------------------------------------------------------

const MiB = 1024 * 1024
const show = (value: unknown): string => json(value)

/** What of a hostile case's expectations did not hold for one run: empty when all did. */
export const hostileVerdict = (hostile: HostileCase, seen: HostileObservation): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const want = hostile.expect
  const ending = seen.ending
  const tag = ending._tag === "Failed" ? ending.tag : ending._tag === "Ok" ? "ok" : ending._tag
  const endings = typeof want.ending === "string" ? [want.ending] : want.ending
  if (!endings.includes(tag)) {
    const text = ending._tag === "Failed" ? `: ${ending.text.slice(0, 600)}` : ""
    problems.push(`ended ${tag}, expected ${endings.join(" or ")}${text}`)
  }
  const fields = ending._tag === "Failed" ? ending.fields : {}
  for (const [name, value] of Object.entries(want.fields ?? {})) {
    if (fields[name] !== value) problems.push(`the failure's ${name} is ${show(fields[name])}, expected ${show(value)}`)
  }
  for (const [name, part] of Object.entries(want.includes ?? {})) {
    if (!String(fields[name] ?? "").includes(part)) problems.push(`the failure's ${name} ${show(fields[name])} does not contain ${show(part)}`)
  }
  for (const [name, part] of Object.entries(want.excludes ?? {})) {
    if (String(fields[name] ?? "").includes(part)) problems.push(`the failure's ${name} contains ${show(part)}`)
  }
  for (const [name, bound] of Object.entries(want.atMost ?? {})) {
    const value = fields[name]
    if (typeof value !== "string" || value.length > bound) {
      problems.push(`the failure's ${name} is ${typeof value === "string" ? `${value.length} long` : show(value)}, expected at most ${bound}`)
    }
  }
  if (want.sizeOverLimit === true) {
    const { limit, size } = fields
    if (typeof size !== "number" || typeof limit !== "number" || size <= limit) {
      problems.push(`the failure's size ${show(size)} is not above its limit ${show(limit)}`)
    }
  }
  if (want.requestId !== undefined && fields["requestId"] !== want.requestId) {
    problems.push(`the failure's requestId is ${show(fields["requestId"])}, expected ${show(want.requestId)}`)
  }
  const posts = seen.server.requests.filter((request) => request.method === "POST")
  if (want.sameIdempotencyKey === true) {
    const key = fields["idempotencyKey"]
    if (typeof key !== "string" || posts.some((post) => post.idempotencyKey !== key)) {
      problems.push(`the POSTs carried ${show(posts.map((post) => post.idempotencyKey))}, not each the failure's key ${show(key)}`)
    }
  }
  if (want.postsReleasedWithinMs !== undefined) {
    const within = want.postsReleasedWithinMs
    const held = posts.filter((post) => post.closedAfterMs === undefined || post.closedAfterMs > within)
    if (posts.length === 0 || held.length > 0) {
      problems.push(
        `answer POSTs released after ${show(posts.map((post) => post.closedAfterMs ?? "never"))} ms, expected each within ${within} ms`
      )
    }
  }
  if (want.requests !== undefined) {
    const count = seen.server.requests.filter((request) => request.method === want.requests?.method).length
    if (count !== want.requests.count) problems.push(`the server received ${count} ${want.requests.method}s, expected ${want.requests.count}`)
  }
  if (want.upgrades !== undefined) {
    const { atLeast, atMost } = typeof want.upgrades === "number"
      ? { atLeast: want.upgrades, atMost: want.upgrades }
      : want.upgrades
    if (seen.server.upgrades < atLeast || seen.server.upgrades > atMost) {
      problems.push(`the server saw ${seen.server.upgrades} upgrades, expected ${atLeast === atMost ? atLeast : `${atLeast} to ${atMost}`}`)
    }
  }
  if (want.elsewhere !== undefined && seen.server.elsewhere !== want.elsewhere) {
    problems.push(`the redirect's target received ${show(seen.server.elsewhere)} requests, expected ${want.elsewhere}`)
  }
  if (want.millisBelow !== undefined && !(seen.millis < want.millisBelow)) {
    problems.push(`took ${seen.millis} ms, expected less than ${want.millisBelow}`)
  }
  if (want.millisAtLeast !== undefined && !(seen.millis >= want.millisAtLeast)) {
    problems.push(`took ${seen.millis} ms, expected at least ${want.millisAtLeast}`)
  }
  const result = seen.result ?? {}
  if (want.closeMillisBelow !== undefined && !(result.closeMillis !== undefined && result.closeMillis < want.closeMillisBelow)) {
    problems.push(`close took ${show(result.closeMillis)} ms, expected less than ${want.closeMillisBelow}`)
  }
  if (want.state !== undefined) {
    const state = result.state
    const { unsentOnly, ...exact } = want.state
    if (state === undefined) problems.push("no connection state recorded")
    else {
      if (state.tag !== exact.tag) problems.push(`the state is ${state.tag}, expected ${exact.tag}`)
      if (exact.reason !== undefined && state.reason !== exact.reason) {
        problems.push(`the state's reason is ${show(state.reason)}, expected ${show(exact.reason)}`)
      }
      if (exact.unsent !== undefined && show(state.unsent ?? []) !== show(exact.unsent)) {
        problems.push(`the unsent answers are ${show(state.unsent)}, expected ${show(exact.unsent)}`)
      }
      if (unsentOnly !== undefined && (state.unsent ?? []).some((unsent) => unsent.actionSessionId !== unsentOnly)) {
        problems.push(`an unsent answer is not for ${unsentOnly}: ${show(state.unsent)}`)
      }
    }
  }
  if (want.event !== undefined) {
    const { includes, tag: eventTag } = want.event
    const found = (result.events ?? []).find((event) => event.tag === eventTag)
    if (found === undefined || !(found.text ?? "").includes(includes)) {
      problems.push(`no ${eventTag} event containing ${show(includes)}: ${show(found)}`)
    }
  }
  if (want.outcome !== undefined) {
    const events = result.events ?? []
    if (events.length !== want.outcome.events) problems.push(`the outcome kept ${events.length} events, expected ${want.outcome.events}`)
    if (events.at(-1)?.tag !== want.outcome.last) problems.push(`the outcome's last event is ${show(events.at(-1)?.tag)}, expected ${want.outcome.last}`)
  }
  if (want.heapMiB !== undefined) {
    if (seen.heapGrowth === undefined) problems.push("the live heap was not measured (run with --expose-gc)")
    else if (seen.heapGrowth / MiB >= want.heapMiB) {
      problems.push(`the live heap grew by ${(seen.heapGrowth / MiB).toFixed(1)} MiB, expected less than ${want.heapMiB}`)
    }
  }
  if (want.spansRecorded === true && seen.spans.length === 0) problems.push("no span was recorded")
  if (want.drained === true && seen.server.openAfter !== 0) {
    problems.push(`${show(seen.server.openAfter)} connections still open at the server`)
  }
  if (want.handlesBack === true && Object.keys(seen.server.handlesLeft ?? { unmeasured: 1 }).length > 0) {
    problems.push(`the process holds more than before: ${show(seen.server.handlesLeft)}`)
  }
  // The key is in nothing a caller sees: the outcome, its cause, the logs, the spans.
  const texts = ending._tag === "Failed" ? [{ where: "the failure", text: ending.text }, ...seen.texts] : seen.texts
  for (const { text, where } of texts) {
    if (text.includes(hostileKey)) problems.push(`the key leaks in ${where}`)
  }
  return problems
}

// ---------------------------------------------------------------------------
// The scripts' pieces
// ---------------------------------------------------------------------------

/** The data of a request for user input, answered through action session `id`. */
export const hostileRequestData = (id: string) => ({
  resource_type: "request_user_input",
  reason: "needs an e-mail",
  action_session_id: id,
  field_name: "email"
})

/** A WebSocket frame `{ event, data }`. */
const frame = (event: string, data: unknown) => JSON.stringify({ event, data })
const startedFrame = frame("started", { sessionId: hostileSession, start_url: "https://example.com" })
const requestFrame = (id: string) => frame("external_resource_requested", hostileRequestData(id))
const completeData = { response: "ok", type: "STRING", total_cost: 1, session_id: hostileSession }

/** A Server-Sent Event. */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
const startedEvent = sse("started", { sessionId: hostileSession, start_url: "https://example.com" })
const requestedEvent = (id: string) => sse("external_resource_requested", hostileRequestData(id))

/** Opens an event stream response and writes `text`; it stays open. */
const openStream = (response: Http.ServerResponse, text = ""): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.write(text)
}

const isGet = (request: Http.IncomingMessage) => request.method === "GET"

const answerJson = (response: Http.ServerResponse, status: number, body: unknown, headers: Http.OutgoingHttpHeaders = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
}

const sessionCreated = (response: Http.ServerResponse) => answerJson(response, 200, { session_id: hostileSession })

const retry = (times: number, spacingMs: number): Retry => ({ times, spacingMs })

/** The SSE transport in the observed dialect, which has it. */
const sseClient = (events: HostileClient["events"] = {}): HostileClient => ({ transport: "sse", dialect: "observed", events })

// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------

const deep100k = "[".repeat(100_000) + "]".repeat(100_000)
const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x73, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])

/** A 500 announcing and sending a 200 MB body, written as fast as it is read. */
const huge500 = (response: Http.ServerResponse): void => {
  const chunk = Buffer.alloc(256 * 1024, 0x62)
  response.writeHead(500, { "content-type": "text/plain", "content-length": String(200 * MiB) })
  let sent = 0
  const pump = (): void => {
    while (sent < 200 * MiB && !response.destroyed) {
      sent += chunk.length
      if (!response.write(chunk)) return void response.once("drain", pump)
    }
    response.end()
  }
  pump()
}

const echoes: ReadonlyArray<readonly [string, (request: Http.IncomingMessage, response: Http.ServerResponse) => void]> = [
  ["x-request-id header on a 401", (_q, r) => answerJson(r, 401, { error: "no" }, { "x-request-id": hostileKey })],
  ["request-id header on a 403, key inside a longer id", (_q, r) => answerJson(r, 403, { error: "no" }, { "request-id": `req-${hostileKey}-1` })],
  ["every header of a 429", (_q, r) =>
    answerJson(r, 429, { error: "slow" }, {
      "x-request-id": hostileKey,
      "x-echo": hostileKey,
      "retry-after": "0",
      "www-authenticate": `Bearer ${hostileKey}`
    })],
  ["the status text of a 500", (_q, r) => {
    r.statusMessage = `broken ${hostileKey}`
    r.writeHead(500, { "content-type": "text/plain" }).end("")
  }],
  ["the body of a 400, as a JSON member and as text", (_q, r) =>
    answerJson(r, 400, { error: `bad ${hostileKey}`, apiKey: hostileKey, nested: { token: hostileKey } })],
  ["the request headers echoed back in a 422", (q, r) => answerJson(r, 422, { message: "bad", headers: q.headers })],
  ["a key across the 4 KiB cut of the body", (_q, r) => {
    r.writeHead(418, { "content-type": "text/plain" }).end("x".repeat(4090) + hostileKey + "y".repeat(100))
  }],
  ["a 2xx that does not decode, echoing the key", (_q, r) => answerJson(r, 200, { session_id: 7, key: hostileKey }, { "x-request-id": hostileKey })],
  ["a 2xx with the key in its headers only", (_q, r) =>
    answerJson(r, 200, { session_id: "s-1" }, { "x-request-id": hostileKey, "set-cookie": `k=${hostileKey}` })]
]

const absurdRetryAfter: ReadonlyArray<Readonly<Record<string, string>>> = [
  { "retry-after": "99999999999999999999" },
  { "retry-after": "1e400" },
  { "retry-after": "-5" },
  { "retry-after": "NaN" },
  { "retry-after": "Fri, 31 Dec 9999 23:59:59 GMT" },
  { "retry-after-ms": "18446744073709551616" },
  { "retry-after": "x".repeat(10_000) }
]

/** The HTTP client (`AgentApi`) against a hostile server. */
const httpCases: ReadonlyArray<HostileCase> = [
  {
    name: "a 200 whose body never ends: ResponseTooLarge at the limit, not retried, memory bounded",
    proves: ["defect 7"],
    script: () => ({
      http: (_request, response) => endless(response, Buffer.alloc(64 * 1024, 0x61), 200, { "content-type": "application/json" })
    }),
    client: { http: { retry: retry(3, 0) } },
    act: { _tag: "CreateSession" },
    expect: {
      ending: "ResponseTooLarge",
      // AgentApi.defaultMaxResponseSize (the core's Http.defaults.maxResponseSize)
      fields: { limit: 4 * MiB, status: 200 },
      sizeOverLimit: true,
      requests: { method: "POST", count: 1 },
      heapMiB: 48,
      drained: true
    }
  },
  {
    name: "a content-length over the limit is refused before reading",
    proves: ["defect 7"],
    script: () => ({
      http: (_request, response) => {
        response.writeHead(200, { "content-type": "application/json", "content-length": String(1024 * MiB) })
        response.write("{")
      }
    }),
    client: { http: { maxResponseSize: 1024 } },
    act: { _tag: "CreateSession" },
    expect: { ending: "ResponseTooLarge", fields: { size: 1024 * MiB, limit: 1024 }, includes: { message: "1024 bytes" }, drained: true }
  },
  {
    name: "a 500 with a 200 MB body: 4 KiB kept, each retry reads at most the limit (create under the idempotent policy: OutcomeUnknown)",
    proves: ["defect 7"],
    script: () => ({ http: (_request, response) => huge500(response) }),
    // A 500 may have created the session: only the idempotent policy sends the POST again.
    client: { http: { createPolicy: "idempotent", retry: retry(2, 10) } },
    act: { _tag: "CreateSession" },
    expect: {
      ending: "OutcomeUnknown",
      fields: { reason: "ServerError", attempts: 3 },
      atMost: { detail: 4096 },
      requests: { method: "POST", count: 3 },
      sameIdempotencyKey: true,
      heapMiB: 48
    }
  },
  {
    name: "getSession of a 500 with a 200 MB body: ServerError, its body cut to 4 KiB, retried, memory bounded",
    proves: ["defect 7"],
    script: () => ({ http: (_request, response) => huge500(response) }),
    // getSession (the observed dialect has it) is retried on any 5xx.
    client: { dialect: "observed", http: { retry: retry(2, 10) } },
    act: { _tag: "GetSession" },
    expect: { ending: "ServerError", fields: { status: 500 }, atMost: { body: 4096 }, requests: { method: "GET", count: 3 }, heapMiB: 48 }
  },
  {
    name: "a 200 that trickles forever times out (idempotent policy: retried, then OutcomeUnknown); its retries do not grow memory",
    proves: ["defect 7"],
    script: () => ({ http: (_request, response) => trickle(response, " ", 20, 200, { "content-type": "application/json" }) }),
    client: { http: { createPolicy: "idempotent", timeoutMs: 300, retry: retry(2, 10) } },
    act: { _tag: "CreateSession" },
    expect: {
      ending: "OutcomeUnknown",
      fields: { reason: "RequestTimeout", attempts: 3 },
      includes: { detail: "300ms" },
      excludes: { detail: hostileKey },
      requests: { method: "POST", count: 3 },
      heapMiB: 16,
      drained: true
    }
  },
  {
    name: "headers that never come: OutcomeUnknown (RequestTimeout) within the time-out, not sent again",
    proves: ["defect 7"],
    script: () => ({ http: () => {} }),
    // The default "safe" policy: the POST was written, so the session may exist.
    client: { http: { timeoutMs: 200, retry: retry(2, 10) } },
    act: { _tag: "CreateSession" },
    expect: {
      ending: "OutcomeUnknown",
      fields: { reason: "RequestTimeout", operation: "AgentApi.createSession", attempts: 1 },
      includes: { detail: "200ms" },
      requests: { method: "POST", count: 1 },
      sameIdempotencyKey: true,
      millisBelow: 10_000,
      drained: true
    }
  },
  ...echoes.map(([label, reply]): HostileCase => ({
    name: `U18 a key echoed in ${label} is scrubbed`,
    proves: ["defect 12", "U18"],
    script: () => ({ http: reply }),
    client: {},
    act: { _tag: "CreateSession" },
    // Whatever the outcome, a typed one (any tag but a defect's), and the key in none of it.
    expect: {
      ending: ["ok", "BadRequest", "Unauthorized", "Forbidden", "RateLimited", "OutcomeUnknown", "UnexpectedStatus", "ResponseDecodeError"],
      excludes: { requestId: hostileKey },
      spansRecorded: true
    }
  })),
  {
    name: "U18 a key across the 4 KiB cut leaves no prefix of itself in the message or body",
    proves: ["defect 12", "U18"],
    script: () => ({ http: (_q, r) => r.writeHead(401, { "content-type": "text/plain" }).end("x".repeat(4084) + hostileKey) }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "Unauthorized", excludes: { message: hostileKey.slice(0, 12), body: hostileKey.slice(0, 12) } }
  },
  {
    name: "U18 Unauthorized.requestId keeps a request id that is not a key",
    proves: ["defect 12", "U18"],
    script: () => ({ http: (_q, r) => answerJson(r, 401, { error: "no" }, { "x-request-id": `req-${hostileKey}` }) }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "Unauthorized", requestId: "req-<redacted>" }
  },
  {
    name: "a 200 nested 100,000 deep: ResponseDecodeError, no stack overflow",
    proves: ["deep responses"],
    script: () => ({ http: (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(`{"session_id":${deep100k}}`) }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "ResponseDecodeError", atMost: { body: 4096 } }
  },
  {
    name: "an error body nested 100,000 deep: its status error, message bounded",
    proves: ["deep responses"],
    script: () => ({ http: (_q, r) => r.writeHead(400, { "content-type": "application/json" }).end(`{"error":${deep100k}}`) }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "BadRequest", atMost: { message: 4096 } }
  },
  {
    name: "invalid UTF-8 in a 200: ResponseDecodeError",
    proves: ["invalid responses"],
    script: () => ({ http: (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end(invalidUtf8) }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "ResponseDecodeError" }
  },
  {
    name: "invalid UTF-8 in an error body echoing the key: Unauthorized, decoded with replacement characters",
    proves: ["invalid responses"],
    script: () => ({
      http: (_q, r) =>
        r.writeHead(401, { "content-type": "application/json" }).end(Buffer.concat([invalidUtf8, Buffer.from(hostileKey)]))
    }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "Unauthorized", includes: { body: "\uFFFD" } }
  },
  ...[301, 302, 303, 307, 308].map((status): HostileCase => ({
    name: `a redirect (${status}) is not followed: the key never reaches the other host`,
    proves: ["defect 12"],
    elsewhere: { http: (_q, r) => answerJson(r, 200, { session_id: "stolen" }) },
    script: ({ elsewhere }) => ({ http: (_q, r) => r.writeHead(status, { location: `${elsewhere}/api/v1sessions` }).end() }),
    client: {},
    act: { _tag: "CreateSession" },
    expect: { ending: "UnexpectedStatus", fields: { status }, elsewhere: 0 }
  })),
  ...absurdRetryAfter.map((headers): HostileCase => ({
    name: `U21 an absurd ${Object.keys(headers)[0]} (${(Object.values(headers)[0] ?? "").slice(0, 32)}): each wait capped by maxRetryAfter, nonsense ignored`,
    proves: ["U21"],
    script: () => ({ http: (_q, r) => answerJson(r, 429, { error: "slow down" }, headers) }),
    client: { http: { maxRetryAfterMs: 100, retry: retry(2, 1) } },
    act: { _tag: "CreateSession" },
    guardMs: 20_000,
    expect: { ending: "RateLimited", requests: { method: "POST", count: 3 } }
  })),
  {
    name: "a response header block over the client's limit: OutcomeUnknown (TransportError), not sent again",
    proves: ["invalid responses", "issue 13"],
    script: () => ({ http: (_q, r) => answerJson(r, 200, { session_id: "s" }, { "x-huge": "h".repeat(200_000) }) }),
    client: { http: { retry: retry(2, 0) } },
    act: { _tag: "CreateSession" },
    // The service answered (it acted): the SDK could not read the answer.
    expect: { ending: "OutcomeUnknown", fields: { reason: "TransportError", attempts: 1 }, requests: { method: "POST", count: 1 } }
  },
  {
    name: "createSession interrupted at 30 points: no socket, no timer, no fiber left",
    proves: ["interruption"],
    script: () => ({
      http: (_q, r, index) => {
        // Every shape of slowness: headers late, body trickling, body endless, a slow success.
        switch (index % 4) {
          case 0:
            return void setTimeout(() => answerJson(r, 200, { session_id: "s" }), 30)
          case 1:
            return trickle(r, " ", 5, 200, { "content-type": "application/json" })
          case 2:
            return endless(r, Buffer.alloc(16 * 1024, 0x20), 200, { "content-type": "application/json" })
          default:
            return
        }
      }
    }),
    client: { http: { timeoutMs: 2000 } },
    act: { _tag: "InterruptCreates", delays: seededDelays(12, 30, 40) },
    expect: { ending: "ok", drained: true, handlesBack: true }
  }
]

const neverAnswered = (): Script => ({
  http: (request, response) => {
    if (isGet(request)) return openStream(response, startedEvent + requestedEvent("as-1"))
    // The answer POST: read, never answered.
    request.resume()
  }
})

/** The Server-Sent Events transport against a hostile server. */
const sseCases: ReadonlyArray<HostileCase> = [
  {
    name: "U16 SSE: close returns within the answer time-out; the answer is reported unsent",
    proves: ["defect 8", "U16"],
    script: neverAnswered,
    client: sseClient({ answerTimeoutMs: 500 }),
    act: { _tag: "AnswerThenClose", answer: "deny" },
    guardMs: 20_000,
    expect: {
      ending: "ok",
      closeMillisBelow: 10_000,
      state: { tag: "Closed", reason: "closed-by-caller", unsent: [{ actionSessionId: "as-1", resourceType: "request_user_input" }] },
      drained: true
    }
  },
  {
    name: "U16 SSE: scope exit (interruption) with an answer POST in flight completes within a bound",
    proves: ["defect 8", "U16"],
    script: neverAnswered,
    client: sseClient({ answerTimeoutMs: 500 }),
    act: { _tag: "AnswerUntil", answer: "deny", posts: 1, thenMs: 0 },
    guardMs: 20_000,
    expect: { ending: "ok", drained: true }
  },
  {
    name: "U16 SSE: an answer POST never answered times out and is sent again after the reconnect",
    proves: ["defect 8", "U16"],
    script: () => {
      let gets = 0
      let posts = 0
      return {
        http: (request, response) => {
          if (isGet(request)) return openStream(response, gets++ === 0 ? startedEvent + requestedEvent("as-1") : "")
          posts += 1
          request.resume()
          // The first is never answered; the next are accepted.
          if (posts > 1) request.on("end", () => response.writeHead(202).end("{}"))
        }
      }
    },
    client: sseClient({ answerTimeoutMs: 300 }),
    act: { _tag: "AnswerUntil", answer: "deny", posts: 2, thenMs: 0 },
    guardMs: 20_000,
    expect: { ending: "ok", requests: { method: "POST", count: 2 }, upgrades: 0 }
  },
  {
    name: "SSE: an answer response with a never-ending body is not read, and released at once",
    proves: ["defect 8", "defect 7"],
    script: () => ({
      http: (request, response) => {
        if (isGet(request)) return openStream(response, startedEvent + requestedEvent("as-1"))
        request.resume()
        endless(response, Buffer.alloc(64 * 1024, 0x20), 202)
      }
    }),
    client: sseClient(),
    act: { _tag: "AnswerUntil", answer: "deny", posts: 1, thenMs: 2000 },
    expect: { ending: "ok", state: { tag: "Open" }, heapMiB: 32, drained: true, postsReleasedWithinMs: 1000 }
  },
  {
    name: "SSE: an answer response whose body never sends a byte: the answer is confirmed, the body released within the answer time-out",
    proves: ["defect 8"],
    script: () => ({
      http: (request, response) => {
        if (isGet(request)) return openStream(response, startedEvent + requestedEvent("as-1"))
        request.resume()
        request.on("end", () => {
          response.writeHead(202, { "content-type": "application/json" })
          response.flushHeaders()
        })
      }
    }),
    client: sseClient({ answerTimeoutMs: 500 }),
    act: { _tag: "AnswerUntil", answer: "deny", posts: 1, thenMs: 2500 },
    guardMs: 20_000,
    expect: { ending: "ok", state: { tag: "Open" }, requests: { method: "POST", count: 1 }, postsReleasedWithinMs: 1500, drained: true }
  },
  {
    name: "U08 SSE: a 401 refusal whose body never ends: HandshakeRejected with at most 4 KiB kept, memory bounded",
    proves: ["defect 7", "U08"],
    script: () => ({
      http: (_request, response) => endless(response, `${hostileKey} `.repeat(2000), 401, { "content-type": "text/plain" })
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: {
      ending: "HandshakeRejected",
      fields: { code: 401 },
      atMost: { reason: 4096 },
      requests: { method: "GET", count: 1 },
      heapMiB: 16,
      drained: true
    }
  },
  {
    name:
      "U12 SSE: a 401 whose body never ends (its first bytes, then nothing): HandshakeRejected with an empty reason after connectTimeout, one request",
    proves: ["U12"],
    script: () => ({
      http: (_request, response) => {
        response.writeHead(401, { "content-type": "text/plain" })
        response.write(`bad key ${hostileKey}, and more to come`)
      }
    }),
    client: sseClient({ connectTimeoutMs: 2000 }),
    act: { _tag: "Events" },
    expect: {
      ending: "HandshakeRejected",
      fields: { code: 401, reason: "" },
      requests: { method: "GET", count: 1 },
      millisAtLeast: 2000,
      millisBelow: 10_000,
      drained: true
    }
  },
  {
    name: "U22 SSE: a line that never ends: FrameTooLarge, memory bounded",
    proves: ["defect 7", "U22"],
    script: () => ({
      http: (_request, response) => {
        openStream(response, startedEvent + "data: ")
        endless(response, Buffer.alloc(64 * 1024, 0x61))
      }
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: { ending: "FrameTooLarge", fields: { limit: MiB }, heapMiB: 32, drained: true }
  },
  {
    name: "U22 SSE: an event of endless short data lines never dispatched: FrameTooLarge",
    proves: ["defect 7", "U22"],
    script: () => ({
      http: (_request, response) => {
        openStream(response, startedEvent + "event: thoughts_and_memories\n")
        endless(response, "data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".repeat(1000))
      }
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: { ending: "FrameTooLarge", heapMiB: 32 }
  },
  {
    name: "U08 SSE: a refusal echoing the key from the URL in its body and status text is scrubbed",
    proves: ["defect 12", "U08"],
    script: () => ({
      http: (request, response) => {
        response.statusMessage = `no ${hostileKey}`
        response.writeHead(403, { "x-request-id": hostileKey }).end(`you sent ${request.url ?? ""}`)
      }
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: { ending: "HandshakeRejected", fields: { code: 403 }, excludes: { reason: hostileKey } }
  },
  {
    name: "SSE: a 500 refusal with a huge body is retried, then NeverConnected, memory bounded",
    proves: ["defect 7", "issue 13"],
    script: () => ({ http: (_request, response) => endless(response, Buffer.alloc(64 * 1024, 0x62), 500) }),
    // Never open (issue 13): the first-connect schedule governs, not the reconnect one.
    client: sseClient({ reconnect: retry(5, 20), firstConnect: retry(2, 20) }),
    act: { _tag: "Events" },
    expect: {
      ending: "NeverConnected",
      fields: { attempts: 3 },
      includes: { lastError: "500" },
      atMost: { lastError: 4096 },
      requests: { method: "GET", count: 3 },
      heapMiB: 16
    }
  },
  {
    name: "U09 SSE: invalid UTF-8 in an event is decoded with replacement characters",
    proves: ["U09"],
    script: () => ({
      http: (_request, response) => {
        openStream(response, startedEvent)
        response.write(Buffer.concat([
          Buffer.from("event: thoughts_and_memories\ndata: {\"thought\":\""),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
          Buffer.from("\",\"memory\":\"m\"}\n\n")
        ]))
        response.write(sse("complete", completeData))
      }
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: { ending: "ok", event: { tag: "ThoughtsAndMemories", includes: "\uFFFD" } }
  },
  {
    name: "U09 SSE: an event nested 3,000 deep: MalformedFrame before parsing, not retried",
    proves: ["U09"],
    script: () => ({
      http: (_request, response) => openStream(response, startedEvent + `event: action_run\ndata: ${deepJson(3000)}\n\n`)
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    // Deeper than Wire's maxDepth (64): refused as a frame error before JSON.parse.
    expect: {
      ending: "MalformedFrame",
      includes: { message: "nested deeper than" },
      atMost: { raw: 4096 },
      requests: { method: "GET", count: 1 }
    }
  },
  {
    name: "U09 SSE: an undecodable event echoing the request URL: EventDecodeError, scrubbed",
    proves: ["defect 12", "U09"],
    script: () => ({
      http: (request, response) =>
        openStream(response, startedEvent + `event: action_run\ndata: ${JSON.stringify({ name: 1, url: request.url })}\n\n`)
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    expect: { ending: "EventDecodeError" }
  },
  {
    name: "U09 SSE: an unknown event echoing the key and the request URL (strict): UnknownEvent, scrubbed",
    proves: ["defect 12", "U09"],
    script: () => ({
      http: (request, response) =>
        openStream(response, startedEvent + `event: echo_${hostileKey}\ndata: ${JSON.stringify({ url: request.url })}\n\n`)
    }),
    client: sseClient({ strict: true }),
    act: { _tag: "Events" },
    expect: { ending: "UnknownEvent" }
  },
  {
    name: "SSE: an event stream that ends after started is reopened on the reconnect schedule, then ConnectionLost",
    proves: ["U08"],
    script: () => ({
      http: (_request, response) => {
        openStream(response, startedEvent)
        response.end()
      }
    }),
    client: sseClient(),
    act: { _tag: "Events" },
    // The first attempt and the reconnect schedule's three more.
    expect: { ending: "ConnectionLost", fields: { attempts: 4, lastError: "the event stream ended" }, requests: { method: "GET", count: 4 } }
  },
  {
    name: "SSE: an answer refused with 401 echoing the key: the connection stays open, the key in nothing a caller sees",
    proves: ["defect 12", "U12"],
    script: () => ({
      http: (request, response) => {
        if (isGet(request)) return openStream(response, startedEvent + requestedEvent("as-1"))
        request.resume()
        answerJson(response, 401, { error: `bad ${hostileKey}` }, { "x-request-id": hostileKey })
      }
    }),
    client: sseClient(),
    act: { _tag: "AnswerUntil", answer: "deny", posts: 1, thenMs: 300 },
    expect: { ending: "ok", state: { tag: "Open" }, requests: { method: "GET", count: 1 } }
  },
  {
    name: "SSE: a connection interrupted at 30 random points: no socket or timer left",
    proves: ["interruption"],
    script: () => ({
      http: (request, response, index) => {
        if (!isGet(request)) return void response.writeHead(202).end()
        switch (index % 3) {
          case 0: {
            openStream(response, startedEvent)
            const timer = setInterval(() => response.write(": keep-alive\n\n"), 3)
            response.on("close", () => clearInterval(timer))
            return
          }
          case 1:
            return void setTimeout(() => response.writeHead(503).end(), 10)
          default:
            return
        }
      }
    }),
    client: sseClient({ reconnect: retry(50, 20), idleTimeoutMs: 1000 }),
    act: { _tag: "SubscribeAndDrop", delays: seededDelays(5, 30, 60) },
    expect: { ending: "ok", drained: true, handlesBack: true }
  }
]

const rejectionCodes = [1008, 4001, 4003, 4401, 4403]
// 4000 (superseded) is neither a rejection nor retried: its own case.
const retriedCodes = [1001, 1002, 1003, 1007, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4002, 4500, 4999]

const closeCases: ReadonlyArray<readonly [string, () => Script]> = [
  ...retriedCodes.map((code): readonly [string, () => Script] => [`${code}`, () => ({ ws: (ws) => ws.close(code, `${code} ${hostileKey}`) })]),
  ["1005 (no code)", () => ({ ws: (ws) => ws.close() })],
  ["1006 (terminated)", () => ({ ws: (ws) => ws.terminate() })],
  ...[999, 1004, 1005, 1006, 1015, 2000, 5000, 65535].map((code): readonly [string, () => Script] => [
    `invalid on the wire ${code}`,
    () => ({
      upgrade: (request, socket) => {
        acceptUpgrade(request, socket)
        socket.end(closeFrame(code, hostileKey))
      }
    })
  ])
]

/** The service ends the session with 1000 while a request is being answered; a reconnect is refused (1008). */
const closesWhileAsked = (id: string) => (): Script => ({
  http: (_request, response) => sessionCreated(response),
  ws: (ws, _request, index) => {
    // The real service refuses a reconnect after the session ended: 1008.
    if (index > 0) return ws.close(1008, "session over")
    ws.send(startedFrame)
    ws.send(requestFrame(id))
    ws.close(1000, "done")
  }
})

/** The WebSocket event channel against a hostile server. */
const wsCases: ReadonlyArray<HostileCase> = [
  ...[99 * 1000 * 1000, 200 * MiB].map((announced): HostileCase => ({
    name: `U22 a frame announcing ${Math.round(announced / MiB)} MiB: FrameTooLarge at once, not retried, not read`,
    proves: ["defect 11", "U22"],
    script: () => ({
      upgrade: (request, socket) => {
        acceptUpgrade(request, socket)
        socket.write(frameHeader(announced))
        // Then the payload, slowly: a client that waits for all of it never finishes.
        const timer = setInterval(() => socket.destroyed ? clearInterval(timer) : socket.write(Buffer.alloc(4096)), 10)
        socket.on("close", () => clearInterval(timer))
      }
    }),
    client: {},
    act: { _tag: "Events" },
    guardMs: 20_000,
    expect: { ending: "FrameTooLarge", fields: { limit: MiB }, sizeOverLimit: true, upgrades: 1, heapMiB: 16, drained: true }
  })),
  {
    name: "U22 a real 3 MiB frame with maxFrameSize 64 KiB: FrameTooLarge (limit 65536), not retried",
    proves: ["defect 11", "U22"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.send(frame("thoughts_and_memories", { thought: "t".repeat(3 * MiB), memory: "" }))
      }
    }),
    client: { events: { maxFrameSize: 64 * 1024 } },
    act: { _tag: "Events" },
    expect: { ending: "FrameTooLarge", fields: { limit: 64 * 1024 }, upgrades: 1 }
  },
  {
    name: "U22 with failOnFrameError: false a frame over the skippable 16 MiB still ends with FrameTooLarge",
    proves: ["defect 11", "U22"],
    script: () => ({
      upgrade: (request, socket) => {
        acceptUpgrade(request, socket)
        socket.write(rawFrame(startedFrame))
        socket.write(frameHeader(64 * MiB))
      }
    }),
    client: { events: { failOnFrameError: false } },
    act: { _tag: "Events" },
    expect: { ending: "FrameTooLarge", upgrades: 1 }
  },
  {
    name: "U09 a text frame that is not UTF-8: MalformedFrame, not retried",
    proves: ["U09"],
    script: () => ({
      upgrade: (request, socket) => {
        acceptUpgrade(request, socket)
        socket.write(rawFrame(startedFrame))
        socket.write(rawFrame(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])))
      }
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "MalformedFrame", upgrades: 1 }
  },
  {
    name: "U09 an event payload nested 3,000 deep: MalformedFrame before parsing, the process survives",
    proves: ["U09"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.send(`{"event":"action_run","data":${deepJson(3000)}}`)
      }
    }),
    client: {},
    act: { _tag: "Events" },
    // Deeper than Wire's maxDepth (64): refused as a frame error before JSON.parse.
    expect: { ending: "MalformedFrame", includes: { message: "nested deeper than" }, atMost: { raw: 4096 }, upgrades: 1 }
  },
  {
    name: "U09 frames nested 100,000 deep at the top level: a typed frame error",
    proves: ["U09"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.send(deepJson(100_000))
      }
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "MalformedFrame" }
  },
  {
    name: "U17 1000 before complete ends the stream without an error, no reconnect",
    proves: ["U17"],
    script: () => ({ ws: (ws) => ws.close(1000, `bye ${hostileKey}`) }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "ok", upgrades: 1 }
  },
  {
    name: "U17 a started event then 1000 ends the stream without an error, no reconnect",
    proves: ["U17"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.close(1000, "done")
      }
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "ok", upgrades: 1 }
  },
  ...rejectionCodes.map((code): HostileCase => ({
    name: `U08 the rejection code ${code} is HandshakeRejected at once, the reason scrubbed`,
    proves: ["U08", "U12"],
    script: () => ({ ws: (ws) => ws.close(code, `refused ${hostileKey}`) }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "HandshakeRejected", fields: { code }, includes: { reason: "<redacted>" }, upgrades: 1 }
  })),
  {
    name: "issue 20: 4000 (superseded) is Superseded at once, never retried, the reason kept and scrubbed",
    proves: ["issue 20"],
    script: () => ({ ws: (ws) => ws.close(4000, `superseded: ${hostileKey}`) }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "Superseded", includes: { reason: "superseded: <redacted>" }, upgrades: 1 }
  },
  ...closeCases.map(([label, script]): HostileCase => ({
    name: `U08 close ${label} is retried, then ConnectionLost or NeverConnected`,
    proves: ["U08"],
    script,
    // A channel that opened is retried on `reconnect`, one that never did on `firstConnect`
    // (issue 13): both at most 2 more tries here.
    client: { events: { reconnect: retry(2, 20), firstConnect: retry(2, 20) } },
    act: { _tag: "Events" },
    expect: {
      // A valid close frame ends a channel that opened: ConnectionLost. An invalid one written
      // together with the 101 can fail the socket before the SDK has seen it open (the open and
      // the read failure race in the client): then NeverConnected. Either way retried and bounded.
      ending: label.startsWith("invalid on the wire") ? ["ConnectionLost", "NeverConnected"] : "ConnectionLost",
      excludes: { lastError: hostileKey },
      upgrades: { atLeast: 2, atMost: 3 }
    }
  })),
  {
    name: "U12 a refused upgrade echoing the key in status text, headers and body",
    proves: ["defect 12", "U12"],
    script: () => ({
      upgrade: (_request, socket) =>
        refuseUpgrade(socket, 401, `Unauthorized ${hostileKey}`, { "x-request-id": hostileKey }, `{"error":"bad key ${hostileKey}"}`)
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "HandshakeRejected", fields: { code: 401 } }
  },
  ...([
    ["MalformedFrame", `not json ${hostileKey}`, undefined],
    // The raw frame is kept, scrubbed.
    ["MalformedFrame", `{"event":"started","data":{"key":"${hostileKey}"`, { raw: `"data":{"key":"<redacted>` }],
    ["EventDecodeError", frame("action_run", { name: 1, key: hostileKey }), undefined],
    ["UnknownEvent", frame(`event_${hostileKey}`, { key: hostileKey }), undefined]
  ] as const).map(([tag, bad, includes]): HostileCase => ({
    name: `U09 a frame echoing the key (${bad.slice(0, 20)}...): ${tag}, scrubbed`,
    proves: ["defect 12", "U09"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.send(bad)
      }
    }),
    client: { events: { strict: true } },
    act: { _tag: "Events" },
    expect: { ending: tag, upgrades: 1, ...(includes === undefined ? {} : { includes }) }
  })),
  {
    name: "U08 a refused upgrade (401) whose body never ends: HandshakeRejected, not retried, memory bounded",
    proves: ["defect 7", "U08"],
    script: () => ({
      upgrade: (_request, socket) => {
        socket.write(`HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n`)
        const chunk = Buffer.from(`${hostileKey} `.repeat(2000))
        const pump = (): void => {
          while (!socket.destroyed) {
            if (!socket.write(chunk)) return void socket.once("drain", pump)
          }
        }
        pump()
      }
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "HandshakeRejected", fields: { code: 401 }, upgrades: 1, heapMiB: 16, drained: true }
  },
  {
    name: "a redirected upgrade (302) is not followed: never connected, the other host reached by nothing",
    proves: ["defect 12"],
    elsewhere: { ws: (ws) => ws.send(startedFrame) },
    script: ({ elsewhere }) => ({
      upgrade: (_request, socket) => refuseUpgrade(socket, 302, "Found", { location: elsewhere.replace("http", "ws") })
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "NeverConnected", includes: { lastError: "302" }, elsewhere: 0 }
  },
  {
    name: "U22 a message in small fragments past maxFrameSize: FrameTooLarge, not retried",
    proves: ["defect 11", "U22"],
    script: () => ({
      upgrade: (request, socket) => {
        acceptUpgrade(request, socket)
        socket.write(rawFrame(startedFrame))
        // A text frame without FIN, then continuation frames of 16 KiB, forever.
        socket.write(Buffer.concat([frameHeader(16 * 1024, 1, false), Buffer.alloc(16 * 1024, 0x61)]))
        const timer = setInterval(() => {
          if (socket.destroyed) return clearInterval(timer)
          socket.write(Buffer.concat([frameHeader(16 * 1024, 0, false), Buffer.alloc(16 * 1024, 0x61)]))
        }, 1)
        socket.on("close", () => clearInterval(timer))
      }
    }),
    client: { events: { maxFrameSize: 64 * 1024 } },
    act: { _tag: "Events" },
    expect: { ending: "FrameTooLarge", fields: { limit: 64 * 1024 }, upgrades: 1, drained: true }
  },
  {
    name: "U09 a binary frame is read as text: an event missing its fields echoing the key is EventDecodeError, scrubbed, not retried",
    proves: ["U09"],
    script: () => ({
      ws: (ws) => {
        ws.send(startedFrame)
        ws.send(Buffer.from(`{"event":"action_run","data":{"key":"${hostileKey}"}}`), { binary: true })
      }
    }),
    client: {},
    act: { _tag: "Events" },
    expect: { ending: "EventDecodeError", upgrades: 1 }
  },
  {
    name: "U22 a 101 without Sec-WebSocket-Accept: never open, retried on firstConnect, NeverConnected",
    proves: ["U22", "issue 13"],
    script: () => ({
      upgrade: (_request, socket) => {
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nx-echo: ${hostileKey}\r\n\r\n`)
      }
    }),
    client: { events: { firstConnect: retry(2, 20) } },
    act: { _tag: "Events" },
    expect: { ending: "NeverConnected", fields: { attempts: 3 }, upgrades: 3, drained: true }
  },
  {
    name: "U17 answers in flight as the service closes with 1000 (20 runs): the stream ends cleanly, never HandshakeRejected, no reconnect; unsent answers reported",
    proves: ["defect 9", "U17"],
    script: closesWhileAsked("as-1"),
    client: {},
    act: { _tag: "AnswerToEnd", answer: "grant" },
    runs: 20,
    expect: { ending: "ok", state: { tag: "Closed", reason: "closed-by-service", unsentOnly: "as-1" }, upgrades: 1 }
  },
  {
    name: "U17 AgentSessions.run answering as the service closes with 1000 (10 runs): SessionEndedWithoutComplete, not HandshakeRejected",
    proves: ["defect 9", "U17"],
    script: closesWhileAsked("as-run"),
    client: {},
    act: { _tag: "Run", answer: "grant" },
    runs: 10,
    expect: { ending: "SessionEndedWithoutComplete", upgrades: 1 }
  },
  {
    name: "AgentSessions.run of 1,500 events of 64 KiB: the outcome keeps the last 100, the live heap stays small",
    proves: ["defect 15"],
    script: () => ({
      http: (_request, response) => sessionCreated(response),
      ws: (ws) => {
        const big = "m".repeat(64 * 1024)
        ws.send(startedFrame)
        for (let i = 0; i < 1_500; i++) ws.send(frame("thoughts_and_memories", { thought: `t${i}`, memory: big }))
        ws.send(frame("complete", completeData))
      }
    }),
    // The server writes its ~96 MiB in the process that runs the SDK, before the upgrade completes
    // on the SDK's side: on a loaded machine that takes seconds. The case is about the tail kept,
    // not the connect time-out.
    client: { events: { connectTimeoutMs: 60_000 } },
    act: { _tag: "Run", answer: "deny" },
    // Keeping every event would hold ~96 MiB here; the tail (AgentSessions.defaultKeepEvents) holds ~6 MiB.
    expect: { ending: "ok", outcome: { events: 100, last: "Complete" }, heapMiB: 40 }
  },
  {
    name: "U22 an upgrade that never completes on a fresh channel: NeverConnected after one connect time-out",
    proves: ["U22", "issue 13"],
    script: () => ({ upgrade: () => {} }),
    client: { events: { connectTimeoutMs: 200, reconnect: retry(1, 20) } },
    act: { _tag: "Events" },
    // Never open (issue 13): a first attempt that used a whole connect time-out is not tried again.
    expect: {
      ending: "NeverConnected",
      fields: { sessionId: hostileSession, attempts: 1 },
      includes: { lastError: "did not open" },
      upgrades: 1,
      millisBelow: 10_000,
      drained: true
    }
  },
  {
    name: "U22 upgrades that never complete after the channel was open: ConnectTimeout each, then ConnectionLost",
    proves: ["U22"],
    script: () => ({
      upgrade: (request, socket, _head, index) => {
        if (index > 0) return
        // The first connection opens, delivers an event, then drops (1006).
        acceptUpgrade(request, socket)
        const timer = setTimeout(() => {
          socket.write(rawFrame(startedFrame))
          setTimeout(() => socket.destroy(), 50)
        }, 50)
        socket.on("close", () => clearTimeout(timer))
      }
    }),
    client: { events: { connectTimeoutMs: 200, reconnect: retry(2, 20) } },
    act: { _tag: "Events" },
    expect: {
      ending: "ConnectionLost",
      fields: { attempts: 3 },
      includes: { lastError: "did not open" },
      // The open one, then the reconnect schedule's two tries, each timed out.
      upgrades: 3,
      drained: true
    }
  },
  {
    name: "a connection interrupted at 30 random points: no socket or timer left",
    proves: ["interruption"],
    script: () => ({
      ws: (ws, _request, index) => {
        switch (index % 3) {
          case 0: {
            const timer = setInterval(() => ws.send(startedFrame), 3)
            ws.on("close", () => clearInterval(timer))
            return
          }
          case 1:
            return void setTimeout(() => ws.close(1011), 10)
          default:
            return
        }
      }
    }),
    client: { events: { reconnect: retry(50, 20), idleTimeoutMs: 1000 } },
    act: { _tag: "SubscribeAndDrop", delays: seededDelays(9, 30, 60) },
    expect: { ending: "ok", drained: true, handlesBack: true }
  }
]

/** Every hostile case, HTTP, Server-Sent Events and WebSocket. */
export const hostileCases: ReadonlyArray<HostileCase> = [...httpCases, ...sseCases, ...wsCases]
