/**
 * End to end over real HTTP on loopback, written once for both editions: the SDK's `AgentApi`
 * (Node's undici client) against the reference simulator (in process on Effect 3, a child process
 * on Effect 4: `simLayer` of `../helpers/line.ts`), in both dialects. What was sent is read from
 * the SDK's own metrics. Each edition's `test/e2e/http.test.ts` holds the cases that differ: those
 * that read the in-process simulator's state or set its faults (Effect 3), and those against a
 * simulator started with faults (Effect 4).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import type { AgentApiError } from "../../src/Errors.js"
import { failureIn, noRetry, outcomeOf, Sim, simLayer, successOf } from "../helpers/line.js"
import { apiFor, attemptsDuring, uniqueName } from "./e2e.js"

const validSession = { start_url: "https://example.com/start", max_actions: 3, goal: "Find the pricing page" }

for (const dialect of ["documented", "observed"] as const) {
  describe(`e2e HTTP (${dialect} dialect)`, () => {
    layer(simLayer({ dialect }), { excludeTestServices: true, timeout: "90 seconds" })((it) => {
      it.effect("onboard returns the agent with its own key", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const name = uniqueName("scout")
          const agent = yield* api.onboard({ name, website: "https://example.com", domain: "research" })
          assert.strictEqual(agent.name, name)
          assert.strictEqual(agent.domain, "research")
          assert.isTrue(agent.agentId.length > 0)
          assert.isTrue(Option.isSome(agent.apiKey))
          assert.notStrictEqual(Option.getOrUndefined(Option.map(agent.apiKey, Redacted.value)), sim.accountKey)
        })))

      it.effect("U07 a duplicate name is Conflict (409), not retried", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const input = { name: uniqueName("twin"), website: "https://example.com", domain: "sales" } as const
          yield* api.onboard(input)
          const { result, sent } = yield* attemptsDuring("onboard", ["409"], api.onboard(input))
          const failure = failureIn(result)
          assert.strictEqual(failure?._tag, "Conflict")
          if (failure?._tag === "Conflict") {
            assert.strictEqual(failure.status, 409)
            assert.isTrue(failure.message.length > 0)
          }
          assert.deepStrictEqual(sent, { "409": 1 })
        })))

      it.effect("U11 createSession with the agent's key; the agent's client without an account key is refused", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const agent = yield* api.onboard({ name: uniqueName("runner"), website: "https://example.com", domain: "automation" })
          // A client that knows only this agent's key, with a wrong account key.
          const agentOnly = yield* apiFor(sim, {
            credentials: { apiKey: "not-the-account-key", agents: [Credentials.fromAgent(agent)] }
          })
          const session = yield* agentOnly.createSession(validSession, { agent: agent.agentId })
          assert.isTrue(session.session_id.length > 0)
          if (Dialect.fromName(sim.dialect).sessionResponse === "flat") {
            assert.deepStrictEqual(session.status, Option.some("started" as const))
            assert.isTrue(Option.isSome(session.startedAt), "U02 the simulator's ISO start_time parses")
          }
          const refused = yield* outcomeOf(agentOnly.createSession(validSession))
          assert.strictEqual(failureIn(refused)?._tag, "Unauthorized")
        })))

      it.effect("U12 a bad key is Unauthorized (401), not retried, and not in the error", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim, { credentials: { apiKey: "wrong-key-SECRET" } })
          const { result, sent } = yield* attemptsDuring(
            "onboard",
            ["401"],
            api.onboard({ name: uniqueName("nope"), website: "https://example.com", domain: "research" })
          )
          const failure = failureIn(result)
          assert.strictEqual(failure?._tag, "Unauthorized")
          assert.notInclude(JSON.stringify(failure), "wrong-key")
          assert.notInclude(failure?.message ?? "", "wrong-key")
          assert.deepStrictEqual(sent, { "401": 1 })
        })))

      it.effect("U20 invalid input and a missing key send nothing", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const none = yield* apiFor(sim, { credentials: {} })
          const bad: ReadonlyArray<readonly [string, Effect.Effect<unknown, AgentApiError>, AgentApiError["_tag"]]> = [
            ["createSession", api.createSession({ ...validSession, start_url: "ftp://example.com" }), "InvalidRequest"],
            ["createSession", api.createSession({ ...validSession, max_actions: 0 }), "InvalidRequest"],
            ["createSession", api.createSession({ ...validSession, goal: "  " }), "InvalidRequest"],
            ["onboard", api.onboard({ name: " ", website: "https://example.com", domain: "research" }), "InvalidRequest"],
            ["onboard", api.onboard({ name: "x", website: "https://example.com", domain: "finance" as "sales" }), "InvalidRequest"],
            ["createSession", none.createSession(validSession), "MissingCredentials"]
          ]
          for (const [operation, effect, tag] of bad) {
            const { result, sent } = yield* attemptsDuring(operation, ["200", "400", "401"], effect)
            assert.strictEqual(failureIn(result)?._tag, tag)
            assert.deepStrictEqual(sent, { "200": 0, "400": 0, "401": 0 })
          }
        })))

      it.effect("the same Idempotency-Key twice is one session (the simulator honours it)", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          const api = yield* apiFor(sim)
          const key = uniqueName("idem")
          const first = yield* api.createSession(validSession, { idempotencyKey: key })
          const again = yield* api.createSession(validSession, { idempotencyKey: key })
          assert.strictEqual(again.session_id, first.session_id)
          const other = yield* api.createSession(validSession)
          assert.notStrictEqual(other.session_id, first.session_id)
        })))

      if (dialect === "observed") {
        it.effect("U10 getSession works in the observed dialect", () =>
          Effect.scoped(Effect.gen(function*() {
            const sim = yield* Sim
            const api = yield* apiFor(sim)
            const created = yield* api.createSession(validSession)
            const fetched = yield* api.getSession(created.session_id)
            assert.strictEqual(fetched.session_id, created.session_id)
            const missing = yield* outcomeOf(api.getSession("no-such-session"))
            assert.strictEqual(failureIn(missing)?._tag, "NotFound")
          })))
      }

      it.effect("U07 a transport failure (nothing listening) is TransportError, without the key", () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Sim
          // Port 1 on loopback: nothing listens there.
          const api = yield* apiFor(sim, { baseUrl: "http://127.0.0.1:1", retry: noRetry })
          const result = yield* outcomeOf(api.createSession(validSession))
          assert.isUndefined(successOf(result))
          assert.strictEqual(failureIn(result)?._tag, "TransportError")
          assert.notInclude(JSON.stringify(failureIn(result)), sim.accountKey)
        })))
    })
  })
}
