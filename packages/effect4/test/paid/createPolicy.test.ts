/**
 * At most one session (or agent) per creating call, whatever fails. A real HTTP
 * server on 127.0.0.1 that acts on every `POST` (counts what it created) and then fails the
 * answer in each way that hides whether it acted; the SDK over real sockets (undici). Under the
 * default policy ("safe") the server created exactly one thing per call, and the call fails with
 * `OutcomeUnknown`; only what provably did not act (no connection, 429, 503) is sent again. The
 * opt-in policy ("idempotent") sends again with the same `Idempotency-Key`, which the simulator
 * honours: one session.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Http from "node:http"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Credentials from "../../src/Credentials.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import { spawnSimulator } from "../helpers/simulator.js"
import { type Failure, startActingServer } from "effect-agent-session-conformance"

const KEY = "sk-paid-test-key"
const session = { start_url: "https://example.com/", goal: "find the pricing page", max_actions: 5 }
const agent = { name: "scout", website: "https://example.com", domain: "research" as const }

/** The acting server (effect-agent-session-conformance), stopped with the test's scope. */
const actingServer = (failure: Failure) =>
  Effect.acquireRelease(
    Effect.promise(() => startActingServer(failure)),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ acting }) => acting))

/** The service over undici, its client kept open for the test's scope. */
const apiFor = (baseUrl: string, options: Partial<AgentApi.Options> & { readonly key?: string } = {}) =>
  Effect.flatMap(
    Layer.build(
      Layer.merge(NodeHttpClient.layerUndici, Credentials.layer({ apiKey: Redacted.make(options.key ?? KEY) }))
    ),
    (context) =>
      AgentApi.make({ baseUrl, timeout: "500 millis", retry: quickRetry, ...options }).pipe(
        Effect.provideContext(context),
        Effect.orDie
      )
  )

/** Two retries, quickly: the policy, not the waits, is under test. */
const quickRetry = Schedule.spaced("20 millis").pipe(Schedule.upTo({ times: 2 }))

describe("the create policy: at most one session per call", () => {
  for (const failure of ["slow", "reset", "502"] as const) {
    it.live(`createSession: a server that acts then fails the answer (${failure}) creates exactly one session`, () =>
      Effect.gen(function*() {
        const server = yield* actingServer(failure)
        const api = yield* apiFor(server.url)
        const error = yield* Effect.flip(api.createSession(session))
        assert.strictEqual(error._tag, "OutcomeUnknown")
        assert.strictEqual(server.created(), 1)
        if (error._tag === "OutcomeUnknown") {
          assert.strictEqual(error.attempts, 1)
          assert.strictEqual(error.idempotencyKey, server.keys()[0])
          assert.include(error.message, "may exist")
          assert.notInclude(error.message, KEY)
        }
      }))

    it.live(`onboard: a server that acts then fails the answer (${failure}) onboards exactly one agent`, () =>
      Effect.gen(function*() {
        const server = yield* actingServer(failure)
        const api = yield* apiFor(server.url)
        const error = yield* Effect.flip(api.onboard(agent))
        assert.strictEqual(error._tag, "OutcomeUnknown")
        assert.strictEqual(server.created(), 1)
      }))
  }

  for (const failure of ["slow", "reset", "502"] as const) {
    for (const transport of ["websocket", "sse"] as const) {
      it.live(`AgentSessions.run (${transport}): a server that acts then fails the answer (${failure}) creates exactly one session and connects nothing`, () =>
        Effect.gen(function*() {
          const server = yield* actingServer(failure)
          let connected = false
          const error = yield* Effect.flip(
            AgentSessions.run(session, {
              onEvent: () => Effect.sync(() => (connected = true))
            }).pipe(
              Effect.provide(NodeAgentSessions.layer({
                apiKey: KEY,
                baseUrl: server.url,
                transport,
                http: { timeout: "500 millis", retry: quickRetry }
              }))
            )
          )
          assert.strictEqual(error._tag, "OutcomeUnknown")
          assert.strictEqual(server.created(), 1)
          // The acting server answers every request, so a connect would be one more request.
          assert.strictEqual(server.keys().length, 1, "one request, no event channel")
          assert.isFalse(connected)
        }))
    }
  }

  for (const failure of ["503-then-ok", "429-then-ok"] as const) {
    it.live(`createSession: ${failure} is sent again, with the same Idempotency-Key, and creates one session`, () =>
      Effect.gen(function*() {
        const server = yield* actingServer(failure)
        const api = yield* apiFor(server.url)
        const info = yield* api.createSession(session)
        assert.strictEqual(info.session_id, "ses_1")
        assert.strictEqual(server.created(), 1)
        const keys = server.keys()
        assert.strictEqual(keys.length, 2)
        assert.match(keys[0] ?? "", /^[0-9a-f-]{36}$/)
        assert.strictEqual(keys[1], keys[0])
      }))
  }

  it.live("createSession: a refused connection (nothing sent) is retried, and ends a TransportError", () =>
    Effect.gen(function*() {
      // A port that was just free: nothing listens there.
      const server = yield* actingServer("slow")
      const url = server.url
      const api = yield* apiFor(url.replace(/:\d+$/, ":1"))
      const error = yield* Effect.flip(api.createSession(session))
      assert.strictEqual(error._tag, "TransportError")
    }))

  it.live("each call has its own key; a caller's key is sent as given", () =>
    Effect.gen(function*() {
      const server = yield* actingServer("503-then-ok")
      const api = yield* apiFor(server.url, { retry: Schedule.recurs(0) })
      yield* Effect.flip(api.createSession(session))
      yield* api.createSession(session, { idempotencyKey: "order-42" })
      const keys = server.keys()
      assert.strictEqual(keys[1], "order-42")
      const bad = yield* Effect.flip(api.createSession(session, { idempotencyKey: "has space" }))
      assert.strictEqual(bad._tag, "InvalidRequest")
    }))

  it.live("the opt-in policy sends again after a reset; the simulator honours the key: one session", () =>
    Effect.gen(function*() {
      const sim = yield* spawnSimulator()
      // A proxy that forwards to the simulator (which acts) and resets the first answer.
      const ids: Array<string> = []
      const proxy = yield* Effect.acquireRelease(
        Effect.callback<Http.Server>((resume) => {
          let seen = 0
          const server = Http.createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (chunk: Buffer) => chunks.push(chunk))
            req.on("end", () => {
              seen += 1
              const attempt = seen
              void fetch(`${sim.baseUrl}${req.url ?? "/"}`, {
                method: req.method ?? "POST",
                headers: Object.fromEntries(
                  Object.entries(req.headers).filter(([name]) =>
                    ["authorization", "content-type", "idempotency-key", "x-api-key"].includes(name)
                  ) as Array<[string, string]>
                ),
                body: Buffer.concat(chunks)
              }).then(async (answer) => {
                const text = await answer.text()
                const id = (JSON.parse(text) as { session_id?: string }).session_id
                if (id !== undefined) ids.push(id)
                if (attempt === 1) return req.socket.destroy()
                res.writeHead(answer.status, { "content-type": "application/json" })
                res.end(text)
              })
            })
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.callback<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const address = proxy.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const api = yield* apiFor(`http://127.0.0.1:${port}`, {
        createPolicy: "idempotent",
        timeout: "5 seconds",
        key: sim.accountKey
      })
      const info = yield* api.createSession(session)
      assert.strictEqual(ids.length, 2, "two requests reached the simulator")
      assert.strictEqual(ids[0], ids[1], "the second got the session of the first")
      assert.strictEqual(info.session_id, ids[0])
      // The same key with another body is refused, typed.
      const direct = yield* apiFor(sim.baseUrl, { key: sim.accountKey })
      const first = yield* direct.createSession(session, { idempotencyKey: "k-1" })
      const again = yield* direct.createSession(session, { idempotencyKey: "k-1" })
      assert.strictEqual(again.session_id, first.session_id)
      const other = yield* Effect.flip(direct.createSession({ ...session, goal: "another goal" }, { idempotencyKey: "k-1" }))
      assert.strictEqual(other._tag, "BadRequest")
      const agentOnce = yield* direct.onboard(agent, { idempotencyKey: "a-1" })
      const agentAgain = yield* direct.onboard(agent, { idempotencyKey: "a-1" })
      assert.strictEqual(agentAgain.agentId, agentOnce.agentId)
      const clash = yield* Effect.flip(direct.onboard({ ...agent, website: "https://other.example.com" }, { idempotencyKey: "a-1" }))
      assert.strictEqual(clash._tag, "Conflict")
    }))
})
