import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Agent from "../src/Agent.js"
import * as Credentials from "../src/Credentials.js"
import { agentBody, json, makeApi, sessionBody, validAgent, validSession } from "./shared/StubHttpClient.js"

const decodeAgent = Schema.decodeUnknownEither(Agent.Agent)

describe("Agent", () => {
  describe("OnboardRequest validation: InvalidRequest, nothing sent", () => {
    const invalid: ReadonlyArray<readonly [string, unknown]> = [
      ["empty name", { ...validAgent, name: "" }],
      ["blank name", { ...validAgent, name: "   " }],
      ["tab and newline name", { ...validAgent, name: "\t\n" }],
      ["empty website", { ...validAgent, website: "" }],
      ["blank website", { ...validAgent, website: "  " }],
      ["domain not one of the five", { ...validAgent, domain: "finance" }],
      ["domain in another case", { ...validAgent, domain: "Sales" }],
      ["empty domain", { ...validAgent, domain: "" }],
      ["missing name", { website: validAgent.website, domain: validAgent.domain }],
      ["name not a string", { ...validAgent, name: 42 }],
      ["not an object", "scout"]
    ]
    for (const [label, input] of invalid) {
      it.effect(`rejects ${label}`, () =>
        Effect.gen(function*() {
          const { api, stub } = yield* makeApi(() => json(200, agentBody()))
          // The input is deliberately wrong: the type system would refuse it, callers in JS may not.
          const error = yield* Effect.flip(api.onboard(input as Agent.OnboardInput))
          assert.strictEqual(error._tag, "InvalidRequest")
          assert.isTrue(error._tag === "InvalidRequest" && error.subject === "OnboardRequest")
          assert.strictEqual(yield* stub.count, 0)
        }))
    }

    it.effect("the message names every problem at once", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody()))
        const error = yield* Effect.flip(api.onboard({ name: " ", website: "", domain: "nope" as "sales" }))
        assert.include(error.message, "name")
        assert.include(error.message, "website")
        assert.include(error.message, "domain")
      }))

    it.effect("each of the five domains is accepted and sent", () =>
      Effect.gen(function*() {
        for (const domain of Agent.AgentDomain.literals) {
          const { api, stub } = yield* makeApi(() => json(200, agentBody({ domain })))
          const agent = yield* api.onboard({ ...validAgent, domain })
          assert.strictEqual(agent.domain, domain)
          const [request] = yield* stub.requests
          assert.deepStrictEqual(JSON.parse(request?.body ?? "null"), { ...validAgent, domain })
        }
      }))
  })

  describe("the onboard response", () => {
    it("U01 extra fields of the agent are ignored", () => {
      const result = decodeAgent(agentBody({ createdAt: "2025-01-01", plan: { tier: "pro" }, tags: [1, 2] }))
      assert.isTrue(Either.isRight(result))
      if (Either.isRight(result)) {
        assert.strictEqual(result.right.agentId, "agent-1")
        assert.isFalse("createdAt" in result.right)
      }
    })

    it.effect("U01 extra fields are ignored over HTTP as well", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody({ owner: "someone", quota: 3 })))
        const agent = yield* api.onboard(validAgent)
        assert.strictEqual(agent.name, "scout")
      }))

    it("U06 apiKey present is Some(Redacted), and never prints", () => {
      const result = decodeAgent(agentBody())
      assert.isTrue(Either.isRight(result))
      if (Either.isRight(result)) {
        const agent = result.right
        assert.deepStrictEqual(Option.map(agent.apiKey, Redacted.value), Option.some("sk-agent-SECRET-77aa01"))
        assert.notInclude(String(agent), "sk-agent-SECRET-77aa01")
        assert.notInclude(JSON.stringify(agent), "sk-agent-SECRET-77aa01")
      }
    })

    it("U06 a missing apiKey is Option.none, not a failure", () => {
      const { apiKey: _, ...withoutKey } = agentBody()
      const result = decodeAgent(withoutKey)
      assert.isTrue(Either.isRight(result))
      if (Either.isRight(result)) assert.isTrue(Option.isNone(result.right.apiKey))
    })

    it.effect("U06 createSession for an agent without a key is MissingAgentKey, nothing sent", () =>
      Effect.gen(function*() {
        const { apiKey: _, ...withoutKey } = agentBody()
        const { api, stub } = yield* makeApi((request) =>
          request.url.endsWith("/agent/onboard") ? json(200, withoutKey) : json(200, sessionBody())
        )
        const agent = yield* api.onboard(validAgent)
        assert.isTrue(Option.isNone(agent.apiKey))
        const error = yield* Effect.flip(api.createSession(validSession, { agent }))
        assert.strictEqual(error._tag, "MissingAgentKey")
        assert.isTrue(error._tag === "MissingAgentKey" && error.agentId === "agent-1")
        // By id as well: the remembered agent has no key.
        const byId = yield* Effect.flip(api.createSession(validSession, { agent: "agent-1" }))
        assert.strictEqual(byId._tag, "MissingAgentKey")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("U06 an empty apiKey counts as missing", () =>
      Effect.gen(function*() {
        const { api, stub } = yield* makeApi(() => json(200, agentBody({ apiKey: "" })))
        const agent = yield* api.onboard(validAgent)
        const error = yield* Effect.flip(api.createSession(validSession, { agent: Credentials.fromAgent(agent) }))
        assert.strictEqual(error._tag, "MissingAgentKey")
        assert.strictEqual(yield* stub.count, 1)
      }))

    it.effect("a domain outside the five in the response is ResponseDecodeError", () =>
      Effect.gen(function*() {
        const { api } = yield* makeApi(() => json(200, agentBody({ domain: "finance" })))
        const error = yield* Effect.flip(api.onboard(validAgent))
        assert.strictEqual(error._tag, "ResponseDecodeError")
      }))
  })
})
