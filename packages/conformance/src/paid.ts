/**
 * The paid-safety scenarios: at most one session (or agent) per creating call, whatever fails.
 * Each is plain data: where the calls go (a server that acts on every create and then hides
 * whether it did, a port nothing listens on, a proxy that loses the simulator's first answer, the
 * simulator itself), how the edition's client is set up, the calls in order, and what must hold.
 * The runner (`test/shared/paid/createPolicy.test.ts`, written once for both editions) makes the
 * calls with each edition's `AgentApi` and `AgentSessions` over real sockets; `paidVerdict` judges
 * what it observed, once for both.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import type { Failure } from "./actingServer.js"
import type { Transport } from "./scenario.js"
import type { Ending } from "./verdict.js"

/** Where the calls go. */
export type PaidServer =
  /** The acting server (`actingServer.ts`): it acts on every request, then fails as told. */
  | { readonly _tag: "Acting"; readonly failure: Failure }
  /** A port nothing listens on: no request is ever written. */
  | { readonly _tag: "Nothing" }
  /** A proxy in front of the simulator that forwards each request and drops the first answer (`startResettingProxy`). */
  | { readonly _tag: "ResettingProxy" }
  /** The simulator, directly. */
  | { readonly _tag: "Simulator" }

/** How the runner sets up its edition's client. */
export interface PaidClient {
  /** `AgentApi`'s `createPolicy`; unset: the edition's default (`"safe"`). */
  readonly createPolicy?: "safe" | "idempotent"
  /** The HTTP retries: this many, 20 ms apart. */
  readonly retries: number
  /** The HTTP time-out of each attempt, in milliseconds. */
  readonly timeoutMs: number
}

/** One call, made through the edition's `AgentApi` (or `AgentSessions.run`). */
export type PaidCall =
  /** `AgentApi.createSession` of the scenarios' session, its goal replaced when given. */
  | { readonly _tag: "createSession"; readonly goal?: string; readonly idempotencyKey?: string }
  /** `AgentApi.onboard` of the scenarios' agent, its website replaced when given. */
  | { readonly _tag: "onboard"; readonly website?: string; readonly idempotencyKey?: string }
  /** `AgentSessions.run` of the scenarios' session over a transport, counting the events delivered. */
  | { readonly _tag: "run"; readonly transport: Transport }

/** The session every call creates. */
export const paidSession = { start_url: "https://example.com/", goal: "find the pricing page", max_actions: 5 }

/** The agent every call onboards. */
export const paidAgent = { name: "scout", website: "https://example.com", domain: "research" as const }

/** What must hold of one call (each member but `ending` optional: unset is not checked). */
export interface CallExpectation {
  /** `ok` (the call succeeded), or the failure's tag. */
  readonly ending: string
  /** The failure's `attempts`: how many requests were sent. */
  readonly attempts?: number
  /** The failure's `idempotencyKey` is the key of the first request the server received. */
  readonly keyIsFirstSent?: boolean
  /** The failure's message contains this. */
  readonly messageIncludes?: string
  /** The id the call got (session or agent). */
  readonly id?: string
  /** The id the call got is the id call `sameIdAs` got. */
  readonly sameIdAs?: number
  /** `run`: no event was delivered. */
  readonly nothingDelivered?: boolean
}

/** The `Idempotency-Key` a request must carry: a generated one (a UUID), the first request's, or this text. */
export type KeyExpectation =
  | { readonly _tag: "Generated" }
  | { readonly _tag: "SameAsFirst" }
  | { readonly _tag: "Given"; readonly key: string }

/** What must hold. */
export interface PaidExpectation {
  readonly calls: ReadonlyArray<CallExpectation>
  /** What the acting server created (it acted on each). */
  readonly created?: number
  /** The `Idempotency-Key` of every request the acting server received, in order (and so their number). */
  readonly keys?: ReadonlyArray<KeyExpectation>
  /** The resetting proxy: the simulator was asked this many times, answered one session to all, the one the first call got. */
  readonly proxied?: number
  /** The account key appears in no text of any failure. */
  readonly keyNeverInError: boolean
}

/** A paid-safety scenario. */
export interface PaidScenario {
  /** The test's name: what it shows. */
  readonly name: string
  /** The issues it proves. */
  readonly proves: ReadonlyArray<string>
  readonly server: PaidServer
  readonly client: PaidClient
  readonly calls: ReadonlyArray<PaidCall>
  readonly expect: PaidExpectation
}

/** What a runner observed of one call. */
export interface CallObservation {
  /** `ok` with the id it got, or the failure (`failed`, `observe.ts`). */
  readonly ending: { readonly _tag: "Ok"; readonly id: string } | Ending
  /** `run`: how many events were delivered. */
  readonly delivered?: number
}

/** What a runner observed of a paid scenario. */
export interface PaidObservation {
  readonly calls: ReadonlyArray<CallObservation>
  /** The acting server's count of what it created. */
  readonly created?: number
  /** The `Idempotency-Key` of every request the acting server received. */
  readonly keys?: ReadonlyArray<string | undefined>
  /** The session ids the simulator answered through the resetting proxy. */
  readonly proxied?: ReadonlyArray<string>
  /** The keys that must never appear in a failure's text. */
  readonly secrets: ReadonlyArray<string>
}

/** The client of most scenarios: the default policy, two quick retries, 500 ms per attempt. */
const quick: PaidClient = { retries: 2, timeoutMs: 500 }

/** The failures that hide whether the server acted. */
const hiding: ReadonlyArray<Failure> = ["slow", "reset", "502"]

export const paidScenarios: ReadonlyArray<PaidScenario> = [
  ...hiding.map((failure): PaidScenario => ({
    name: `createSession: a server that acts then fails the answer (${failure}) creates exactly one session`,
    proves: ["issue 13"],
    server: { _tag: "Acting", failure },
    client: quick,
    calls: [{ _tag: "createSession" }],
    expect: {
      calls: [{ ending: "OutcomeUnknown", attempts: 1, keyIsFirstSent: true, messageIncludes: "may exist" }],
      created: 1,
      keys: [{ _tag: "Generated" }],
      keyNeverInError: true
    }
  })),
  ...hiding.map((failure): PaidScenario => ({
    name: `onboard: a server that acts then fails the answer (${failure}) onboards exactly one agent`,
    proves: ["issue 13"],
    server: { _tag: "Acting", failure },
    client: quick,
    calls: [{ _tag: "onboard" }],
    expect: {
      calls: [{ ending: "OutcomeUnknown", attempts: 1, keyIsFirstSent: true, messageIncludes: "may exist" }],
      created: 1,
      keyNeverInError: true
    }
  })),
  ...hiding.flatMap((failure) =>
    (["websocket", "sse"] as const).map((transport): PaidScenario => ({
      name: `AgentSessions.run (${transport}): a server that acts then fails the answer (${failure}) creates exactly one session and connects nothing`,
      proves: ["issue 13"],
      server: { _tag: "Acting", failure },
      client: quick,
      calls: [{ _tag: "run", transport }],
      expect: {
        calls: [{ ending: "OutcomeUnknown", attempts: 1, keyIsFirstSent: true, nothingDelivered: true }],
        created: 1,
        // The acting server answers every request: an event channel would be one more.
        keys: [{ _tag: "Generated" }],
        keyNeverInError: true
      }
    }))
  ),
  ...(["503-then-ok", "429-then-ok"] as const).map((failure): PaidScenario => ({
    name: `createSession: ${failure} is sent again, with the same Idempotency-Key, and creates one session`,
    proves: ["issue 13"],
    server: { _tag: "Acting", failure },
    client: quick,
    calls: [{ _tag: "createSession" }],
    expect: {
      calls: [{ ending: "ok", id: "ses_1" }],
      created: 1,
      keys: [{ _tag: "Generated" }, { _tag: "SameAsFirst" }],
      keyNeverInError: true
    }
  })),
  {
    name: "createSession: a refused connection (nothing sent) is retried, and ends a TransportError",
    proves: ["issue 13"],
    server: { _tag: "Nothing" },
    client: quick,
    calls: [{ _tag: "createSession" }],
    expect: { calls: [{ ending: "TransportError" }], keyNeverInError: true }
  },
  {
    name: "each call has its own key; a caller's key is sent as given, and a malformed one is refused before sending",
    proves: ["issue 13"],
    server: { _tag: "Acting", failure: "503-then-ok" },
    client: { retries: 0, timeoutMs: 500 },
    calls: [
      { _tag: "createSession" },
      { _tag: "createSession", idempotencyKey: "order-42" },
      { _tag: "createSession", idempotencyKey: "has space" }
    ],
    expect: {
      calls: [{ ending: "ServerError" }, { ending: "ok", id: "ses_1" }, { ending: "InvalidRequest" }],
      created: 1,
      keys: [{ _tag: "Generated" }, { _tag: "Given", key: "order-42" }],
      keyNeverInError: true
    }
  },
  {
    name: "the opt-in policy sends again after a reset; the simulator honours the key: one session",
    proves: ["issue 13"],
    server: { _tag: "ResettingProxy" },
    client: { createPolicy: "idempotent", retries: 2, timeoutMs: 5000 },
    calls: [{ _tag: "createSession" }],
    expect: { calls: [{ ending: "ok" }], proxied: 2, keyNeverInError: true }
  },
  {
    name: "the simulator honours Idempotency-Key: the same key gets the same session or agent, another body is refused",
    proves: ["issue 13"],
    server: { _tag: "Simulator" },
    client: { retries: 0, timeoutMs: 5000 },
    calls: [
      { _tag: "createSession", idempotencyKey: "k-1" },
      { _tag: "createSession", idempotencyKey: "k-1" },
      { _tag: "createSession", idempotencyKey: "k-1", goal: "another goal" },
      { _tag: "onboard", idempotencyKey: "a-1" },
      { _tag: "onboard", idempotencyKey: "a-1" },
      { _tag: "onboard", idempotencyKey: "a-1", website: "https://other.example.com" }
    ],
    expect: {
      calls: [
        { ending: "ok" },
        { ending: "ok", sameIdAs: 0 },
        { ending: "BadRequest" },
        { ending: "ok" },
        { ending: "ok", sameIdAs: 3 },
        { ending: "Conflict" }
      ],
      keyNeverInError: true
    }
  }
]

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** What of a paid scenario's expectations did not hold: empty when all did. */
export const paidVerdict = (scenario: PaidScenario, observed: PaidObservation): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const expected = scenario.expect
  if (observed.calls.length !== expected.calls.length) {
    problems.push(`${observed.calls.length} calls observed, ${expected.calls.length} expected`)
  }
  const idOf = (index: number): string | undefined => {
    const ending = observed.calls[index]?.ending
    return ending?._tag === "Ok" ? ending.id : undefined
  }
  expected.calls.forEach((want, index) => {
    const call = observed.calls[index]
    if (call === undefined) return
    const at = `call ${index + 1}`
    const ending = call.ending
    const tag = ending._tag === "Ok" ? "ok" : ending._tag === "Failed" ? ending.tag : ending._tag
    if (tag !== want.ending) problems.push(`${at}: ended ${tag}, expected ${want.ending}`)
    const fields = ending._tag === "Failed" ? ending.fields : {}
    if (want.attempts !== undefined && fields.attempts !== want.attempts) {
      problems.push(`${at}: attempts ${String(fields.attempts)}, expected ${want.attempts}`)
    }
    if (want.keyIsFirstSent === true && (observed.keys?.[0] === undefined || fields.idempotencyKey !== observed.keys[0])) {
      problems.push(`${at}: the failure's idempotencyKey ${String(fields.idempotencyKey)} is not the key sent first`)
    }
    if (want.messageIncludes !== undefined && !(ending._tag === "Failed" && ending.text.includes(want.messageIncludes))) {
      problems.push(`${at}: the failure does not say "${want.messageIncludes}"`)
    }
    if (want.id !== undefined && idOf(index) !== want.id) problems.push(`${at}: got ${String(idOf(index))}, expected ${want.id}`)
    if (want.sameIdAs !== undefined && (idOf(index) === undefined || idOf(index) !== idOf(want.sameIdAs))) {
      problems.push(`${at}: got ${String(idOf(index))}, not the id of call ${want.sameIdAs + 1} (${String(idOf(want.sameIdAs))})`)
    }
    if (want.nothingDelivered === true && call.delivered !== 0) {
      problems.push(`${at}: ${String(call.delivered)} events delivered, expected none`)
    }
  })
  if (expected.created !== undefined && observed.created !== expected.created) {
    problems.push(`the server created ${String(observed.created)}, expected ${expected.created}`)
  }
  if (expected.keys !== undefined) {
    const keys = observed.keys ?? []
    if (keys.length !== expected.keys.length) problems.push(`the server received ${keys.length} requests, expected ${expected.keys.length}`)
    expected.keys.forEach((want, index) => {
      const key = keys[index]
      const holds = want._tag === "Generated"
        ? key !== undefined && uuid.test(key)
        : want._tag === "SameAsFirst"
        ? key !== undefined && key === keys[0]
        : key === want.key
      if (!holds) problems.push(`request ${index + 1} carried the Idempotency-Key ${String(key)}, expected ${want._tag}`)
    })
  }
  if (expected.proxied !== undefined) {
    const ids = observed.proxied ?? []
    if (ids.length !== expected.proxied) problems.push(`the simulator was asked ${ids.length} times, expected ${expected.proxied}`)
    if (new Set(ids).size !== 1) problems.push(`the simulator answered ${new Set(ids).size} sessions, expected one: ${ids.join(", ")}`)
    if (ids[0] !== idOf(0)) problems.push(`the first call got ${String(idOf(0))}, not the simulator's ${String(ids[0])}`)
  }
  if (expected.keyNeverInError) {
    for (const call of observed.calls) {
      if (call.ending._tag !== "Failed") continue
      for (const secret of observed.secrets) {
        if (secret.length > 0 && call.ending.text.includes(secret)) problems.push(`a key is in the text of the failure ${call.ending.tag}`)
      }
    }
  }
  return problems
}

/** What a test reads of a resetting proxy. */
export interface ResettingProxy {
  readonly url: string
  /** The session ids the target answered, in order. */
  readonly ids: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** The headers the proxy forwards. */
const forwarded = ["authorization", "content-type", "idempotency-key", "x-api-key"]

/**
 * A proxy on 127.0.0.1 in front of `target` (the simulator, which acts): it forwards every request
 * and drops the connection of the first one instead of answering it, after the target acted.
 */
export const startResettingProxy = (target: string): Promise<ResettingProxy> =>
  new Promise((resolve) => {
    let seen = 0
    const ids: Array<string> = []
    const sockets = new Set<Net.Socket>()
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        seen += 1
        const attempt = seen
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(req.headers)) {
          if (forwarded.includes(name) && typeof value === "string") headers[name] = value
        }
        fetch(`${target}${req.url ?? "/"}`, { method: req.method ?? "POST", headers, body: Buffer.concat(chunks) })
          .then(async (answer) => {
            const text = await answer.text()
            const id = (JSON.parse(text) as { session_id?: unknown }).session_id
            if (typeof id === "string") ids.push(id)
            if (attempt === 1) return void req.socket.destroy()
            res.writeHead(answer.status, { "content-type": "application/json" })
            res.end(text)
          })
          .catch(() => req.socket.destroy())
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
        url: `http://127.0.0.1:${port}`,
        ids: () => ids,
        close: () =>
          new Promise<void>((done) => {
            sockets.forEach((s) => s.destroy())
            server.close(() => done())
          })
      })
    })
  })
