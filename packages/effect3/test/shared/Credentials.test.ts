/**
 * The credentials, tested once for both editions: which key each operation uses (U11), a missing
 * key failing before any request (U12), an agent without a key (U06), over the service and over
 * HTTP (the stub HttpClient), and the layers. The Effect 4 edition's `Credentials.test.ts` holds
 * the case whose text is Effect 4's.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Credentials from "../../src/Credentials.js"
import * as Dialect from "../../src/Dialect.js"
import { ACCOUNT_KEY, agentBody, json, makeApi, sessionBody, validAgent, validSession } from "./StubHttpClient.js"
import { withEnv } from "../helpers/line.js"

const AGENT_KEY = "sk-agent-SECRET-77aa01"
const agentRef: Credentials.AgentKeyRef = { agentId: "agent-9", apiKey: Option.some(Redacted.make("sk-agent-nine")) }

const keyOf = (
  service: Credentials.Service,
  operation: Credentials.Operation,
  agent?: Credentials.AgentKeyRef | string
) => Effect.map(service.keyFor(operation, agent), Redacted.value)

describe("Credentials", () => {
  describe("U11 which key each operation uses", () => {
    it.effect("U11 default: onboard uses the account key, even when an agent is given", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY })
        assert.strictEqual(yield* keyOf(service, "onboard"), ACCOUNT_KEY)
        assert.strictEqual(yield* keyOf(service, "onboard", agentRef), ACCOUNT_KEY)
      }))

    it.effect("U11 default: createSession, getSession and connect use the agent key when given, else the account key", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY })
        for (const operation of ["createSession", "getSession", "connect"] as const) {
          assert.strictEqual(yield* keyOf(service, operation), ACCOUNT_KEY)
          assert.strictEqual(yield* keyOf(service, operation, agentRef), "sk-agent-nine")
        }
      }))

    it.effect("U11 an agent named by id uses the key remembered for it", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY, agents: [agentRef] })
        assert.strictEqual(yield* keyOf(service, "createSession", "agent-9"), "sk-agent-nine")
        yield* service.remember({ agentId: "agent-10", apiKey: Option.some(Redacted.make("sk-ten")) })
        assert.strictEqual(yield* keyOf(service, "connect", "agent-10"), "sk-ten")
        const unknown = yield* Effect.flip(service.keyFor("createSession", "agent-unknown"))
        assert.strictEqual(unknown._tag, "MissingAgentKey")
      }))

    it.effect("U11 selection \"account\": the account key for everything", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY, selection: "account" })
        assert.strictEqual(yield* keyOf(service, "createSession", agentRef), ACCOUNT_KEY)
        assert.strictEqual(yield* keyOf(service, "connect", agentRef), ACCOUNT_KEY)
      }))

    it.effect("U11 selection \"agent\": session operations require an agent key", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY, selection: "agent" })
        const error = yield* Effect.flip(service.keyFor("createSession"))
        assert.strictEqual(error._tag, "MissingAgentKey")
        assert.strictEqual(yield* keyOf(service, "createSession", agentRef), "sk-agent-nine")
        assert.strictEqual(yield* keyOf(service, "onboard"), ACCOUNT_KEY)
      }))

    it.effect("U06 an agent whose key is absent or empty is MissingAgentKey", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY })
        for (const apiKey of [Option.none(), Option.some(Redacted.make("")), Option.some(Redacted.make("  "))]) {
          const error = yield* Effect.flip(service.keyFor("createSession", { agentId: "a-1", apiKey }))
          assert.isTrue(error._tag === "MissingAgentKey" && error.agentId === "a-1")
        }
      }))
  })

  describe("over HTTP (the stub HttpClient)", () => {
    it.effect("U11 onboard with the account key, createSession with the agent key, in both dialects", () =>
      Effect.gen(function*() {
        for (const dialect of [Dialect.documented, Dialect.observed]) {
          const { api, stub } = yield* makeApi(
            (request) =>
              request.url.endsWith("/agent/onboard")
                ? json(200, agentBody())
                : json(200, dialect.sessionResponse === "flat" ? sessionBody() : { data: { sessionId: "s" } }),
            { dialect }
          )
          const agent = yield* api.onboard(validAgent)
          yield* api.createSession(validSession, { agent })
          yield* api.createSession(validSession, { agent: agent.agentId })
          yield* api.createSession(validSession)
          const sent = (yield* stub.requests).map((r) =>
            dialect.auth === "bearer" ? r.headers["authorization"] : r.headers["x-api-key"]
          )
          const prefix = dialect.auth === "bearer" ? "Bearer " : ""
          assert.deepStrictEqual(sent, [
            `${prefix}${ACCOUNT_KEY}`,
            `${prefix}${AGENT_KEY}`,
            `${prefix}${AGENT_KEY}`,
            `${prefix}${ACCOUNT_KEY}`
          ])
        }
      }))

    it.effect("U12 onboard and createSession without a key send nothing", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, agentBody()), { credentials: {} })
        const onboard = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(onboard._tag, "MissingCredentials")
        const create = yield* Effect.flip(api.createSession(validSession))
        assert.strictEqual(create._tag, "MissingCredentials")
        assert.strictEqual(yield* stub.count, 0)
      }))

    it.effect("U12 getSession without a key names its own operation and sends nothing", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, sessionBody()), {
          credentials: {},
          dialect: Dialect.observed
        })
        const error = yield* Effect.flip(api.getSession("ses_1"))
        assert.deepStrictEqual(
          error._tag === "MissingCredentials" ? [error.operation, error.variable] : [],
          ["getSession", "AGENT_SESSION_API_KEY"]
        )
        assert.strictEqual(yield* stub.count, 0)
      }))

    it.effect("U12 validation comes first: bad input without a key is InvalidRequest", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, agentBody()), { credentials: {} })
        const error = yield* Effect.flip(api.createSession({ ...validSession, goal: "" }))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.strictEqual(yield* stub.count, 0)
      }))

    it.effect("U12 a refused key is Unauthorized and is not retried", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(401, { error: "invalid api key" }))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "Unauthorized")
        assert.strictEqual(yield* stub.count, 1)
      }))
  })

  describe("U12 a missing key fails before any request", () => {
    it.effect("U12 MissingCredentials names the operation and the variable", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({})
        const error = yield* Effect.flip(service.keyFor("onboard"))
        assert.isTrue(error._tag === "MissingCredentials" && error.operation === "onboard")
        assert.isTrue(error._tag === "MissingCredentials" && error.variable === "AGENT_SESSION_API_KEY")
        assert.include(error.message, "AGENT_SESSION_API_KEY")
      }))

    it.effect("U12 a blank key counts as missing", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: "   " })
        assert.strictEqual((yield* Effect.flip(service.keyFor("connect")))._tag, "MissingCredentials")
      }))
  })

  describe("layers", () => {
    it.effect("layerConfig reads AGENT_SESSION_API_KEY", () =>
      Effect.gen(function*() {
        const key = yield* Effect.gen(function*() {
          return yield* keyOf(yield* Credentials.Credentials, "onboard")
        }).pipe(Effect.provide(Credentials.layerConfig()), withEnv({ AGENT_SESSION_API_KEY: "from-env" }))
        assert.strictEqual(key, "from-env")
      }))

    it.effect("layerConfig without the variable builds, and fails MissingCredentials on use", () =>
      Effect.gen(function*() {
        const error = yield* Effect.gen(function*() {
          return yield* (yield* Credentials.Credentials).keyFor("onboard")
        }).pipe(Effect.provide(Credentials.layerConfig()), withEnv({}), Effect.flip)
        assert.strictEqual(error._tag, "MissingCredentials")
      }))

    it.effect("an effectful account key is read afresh for every request (rotation)", () =>
      Effect.gen(function*() {
        const current = yield* Ref.make("key-1")
        const service = yield* Credentials.make({
          apiKey: Effect.map(Ref.get(current), (k) => Option.some(Redacted.make(k)))
        })
        assert.strictEqual(yield* keyOf(service, "onboard"), "key-1")
        yield* Ref.set(current, "key-2")
        assert.strictEqual(yield* keyOf(service, "onboard"), "key-2")
      }))

    it.effect("secrets lists the account key and every known agent key", () =>
      Effect.gen(function*() {
        const service = yield* Credentials.make({ apiKey: ACCOUNT_KEY, agents: [agentRef] })
        yield* service.remember({ agentId: "x", apiKey: Option.none() })
        const secrets = yield* service.secrets
        assert.sameMembers([...secrets], [ACCOUNT_KEY, "sk-agent-nine"])
      }))

    it("keys never print", () => {
      const key = Redacted.make(ACCOUNT_KEY)
      assert.notInclude(String(key), ACCOUNT_KEY)
      assert.notInclude(JSON.stringify({ key }), ACCOUNT_KEY)
      assert.notInclude(String(agentRef.apiKey), "sk-agent-nine")
    })
  })
})
