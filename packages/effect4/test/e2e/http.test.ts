/**
 * End to end over real HTTP on loopback: the Effect 4 edition's `AgentApi` (Node's undici client)
 * against the reference simulator running as a child process (the root's command line,
 * `simulate --port 0`), in both dialects, with the simulator's HTTP faults.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as AgentApi from "../../src/AgentApi.js"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { AgentApiError } from "../../src/Errors.js"
import * as Metrics from "../../src/Metrics.js"
import { type SimulatorInfo, spawnSimulator, type SimulatorOptions } from "../helpers/simulator.js"

const validSession = { start_url: "https://example.com/start", max_actions: 3, goal: "Find the pricing page" }

let names = 0
const uniqueName = (prefix: string): string => `${prefix}-${process.pid}-${++names}`

/** The simulator of a describe block, as a service of its layer. */
class Sim extends Context.Service<Sim, SimulatorInfo>()("test/e2e/Sim") {}

const simLayer = (options: SimulatorOptions) => Layer.effect(Sim, spawnSimulator(options))

/** An `AgentApi` pointed at the simulator over undici, its dispatcher open for the test's scope. */
const apiFor = (
  sim: SimulatorInfo,
  options: Partial<AgentApi.Options> & { readonly credentials?: Credentials.Options } = {}
) =>
  Effect.gen(function*() {
    const { credentials, ...rest } = options
    const context = yield* Layer.build(
      Layer.merge(NodeHttpClient.layerUndici, Credentials.layer(credentials ?? { apiKey: Redacted.make(sim.accountKey) }))
    )
    return yield* AgentApi.make({ baseUrl: sim.baseUrl, dialect: Dialect.fromName(sim.dialect), ...rest }).pipe(
      Effect.provideContext(context),
      Effect.orDie
    )
  })

/** The attempts the SDK sent for an operation, by status, while `effect` ran (its own metrics). */
const attemptsDuring = <A, E>(operation: string, statuses: ReadonlyArray<string>, effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const count = (status: string) => Metrics.counterValue("agent_session_http_attempts_total", { operation, status })
    const before = yield* Effect.forEach(statuses, count)
    const result = yield* Effect.result(effect)
    const after = yield* Effect.forEach(statuses, count)
    return { result, sent: Object.fromEntries(statuses.map((status, i) => [status, after[i]! - before[i]!])) }
  })

for (const dialect of ["documented", "observed"] as const) {
  describe(`e2e HTTP (${dialect} dialect, the simulator as a child process)`, () => {
    layer(simLayer({ dialect }), { excludeTestServices: true, timeout: "90 seconds" })((it) => {
      it.effect("onboard returns the agent with its own key", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const name = uniqueName("scout")
          const agent = yield* api.onboard({ name, website: "https://example.com", domain: "research" })
          assert.strictEqual(agent.name, name)
          assert.strictEqual(agent.domain, "research")
          assert.isTrue(agent.agentId.length > 0)
          assert.isTrue(Option.isSome(agent.apiKey))
          assert.notStrictEqual(Option.getOrUndefined(Option.map(agent.apiKey, Redacted.value)), sim.accountKey)
        }))

      it.effect("U07 a duplicate name is Conflict (409), not retried", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const input = { name: uniqueName("twin"), website: "https://example.com", domain: "sales" } as const
          yield* api.onboard(input)
          const { result, sent } = yield* attemptsDuring("onboard", ["409"], api.onboard(input))
          assert.isTrue(Result.isFailure(result) && result.failure._tag === "Conflict")
          if (Result.isFailure(result) && result.failure._tag === "Conflict") {
            assert.strictEqual(result.failure.status, 409)
            assert.isTrue(result.failure.message.length > 0)
          }
          assert.deepStrictEqual(sent, { "409": 1 })
        }))

      it.effect("U11 createSession with the agent's key; the agent's client without an account key is refused", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const agent = yield* api.onboard({ name: uniqueName("runner"), website: "https://example.com", domain: "automation" })
          const agentOnly = yield* apiFor(sim, {
            credentials: { apiKey: "not-the-account-key", agents: [Credentials.fromAgent(agent)] }
          })
          const session = yield* agentOnly.createSession(validSession, { agent: agent.agentId })
          assert.isTrue(session.session_id.length > 0)
          if (dialect === "documented") {
            assert.deepStrictEqual(session.status, Option.some("started" as const))
            assert.isTrue(Option.isSome(session.startedAt), "U02 the simulator's ISO start_time parses")
          }
          const refused = yield* Effect.result(agentOnly.createSession(validSession))
          assert.isTrue(Result.isFailure(refused) && refused.failure._tag === "Unauthorized")
        }))

      it.effect("U12 a bad key is Unauthorized (401), not retried, and not in the error", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { credentials: { apiKey: "wrong-key-SECRET" } })
          const { result, sent } = yield* attemptsDuring(
            "onboard",
            ["401"],
            api.onboard({ name: uniqueName("nope"), website: "https://example.com", domain: "research" })
          )
          assert.isTrue(Result.isFailure(result) && result.failure._tag === "Unauthorized")
          if (Result.isFailure(result)) {
            assert.notInclude(JSON.stringify(result.failure), "wrong-key-SECRET")
            assert.notInclude(result.failure.message, "wrong-key-SECRET")
          }
          assert.deepStrictEqual(sent, { "401": 1 })
        }))

      it.effect("U20 invalid input and a missing key send nothing", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const none = yield* apiFor(sim, { credentials: {} })
          const bad: ReadonlyArray<readonly [string, Effect.Effect<unknown, AgentApiError>, AgentApiError["_tag"]]> = [
            ["createSession", api.createSession({ ...validSession, start_url: "ftp://example.com" }), "InvalidRequest"],
            ["createSession", api.createSession({ ...validSession, max_actions: 0 }), "InvalidRequest"],
            ["onboard", api.onboard({ name: " ", website: "https://example.com", domain: "research" }), "InvalidRequest"],
            ["createSession", none.createSession(validSession), "MissingCredentials"]
          ]
          for (const [operation, effect, tag] of bad) {
            const { result, sent } = yield* attemptsDuring(operation, ["200", "400", "401"], effect)
            assert.isTrue(Result.isFailure(result) && result.failure._tag === tag, tag)
            assert.deepStrictEqual(sent, { "200": 0, "400": 0, "401": 0 })
          }
        }))

      it.effect("the same Idempotency-Key twice is one session (the simulator honours it)", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const key = uniqueName("idem")
          const first = yield* api.createSession(validSession, { idempotencyKey: key })
          const again = yield* api.createSession(validSession, { idempotencyKey: key })
          assert.strictEqual(again.session_id, first.session_id)
          const other = yield* api.createSession(validSession)
          assert.notStrictEqual(other.session_id, first.session_id)
        }))
    })

    // The simulator's first five requests are answered 503, the sixth 429 with `Retry-After: 1`.
    // The two tests run in order and spend the faults in turn.
    layer(simLayer({ dialect, faults: ["fail-503=5", "rate-limit=1:1"] }), {
      excludeTestServices: true,
      timeout: "90 seconds"
    })((it) => {
      it.effect("U21 503 past the retries is ServerError after 3 attempts (503 says nothing was created)", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { retry: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 2 })) })
          const { result, sent } = yield* attemptsDuring("onboard", ["503"], api.onboard({
            name: uniqueName("busy"),
            website: "https://example.com",
            domain: "research"
          }))
          assert.isTrue(Result.isFailure(result) && result.failure._tag === "ServerError", String(result))
          assert.deepStrictEqual(sent, { "503": 3 })
        }))

      it.effect("U21 503 x 2, then 429 with Retry-After: 1, then success: one createSession call, one session", () =>
        Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { retry: Schedule.exponential("10 millis").pipe(Schedule.upTo({ times: 4 })) })
          const key = uniqueName("faults")
          const started = Date.now()
          const { result, sent } = yield* attemptsDuring(
            "createSession",
            ["503", "429", "200"],
            api.createSession(validSession, { idempotencyKey: key })
          )
          const elapsed = Date.now() - started
          assert.isTrue(Result.isSuccess(result), String(result))
          assert.deepStrictEqual(sent, { "503": 2, "429": 1, "200": 1 })
          // The 429's Retry-After (1 s) was honoured over the schedule's 40 ms.
          assert.isAtLeast(elapsed, 1000)
          // The faults are spent: the next call is one attempt, and the same key is the same session.
          const next = yield* attemptsDuring("createSession", ["200"], api.createSession(validSession, { idempotencyKey: key }))
          assert.isTrue(Result.isSuccess(next.result) && Result.isSuccess(result))
          if (Result.isSuccess(next.result) && Result.isSuccess(result)) {
            assert.strictEqual(next.result.success.session_id, result.success.session_id)
          }
          assert.deepStrictEqual(next.sent, { "200": 1 })
        }))
    })
  })
}
