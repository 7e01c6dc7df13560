import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Keys } from "../src/index.js"

const operations: ReadonlyArray<Keys.Operation> = ["onboard", "createSession", "getSession", "connect"]
const selections: ReadonlyArray<Keys.KeySelection> = ["agent-or-account", "account", "agent"]

describe("Keys: which key each operation uses (U11)", () => {
  it("U11 onboard always uses the account key", () => {
    for (const selection of selections) {
      for (const agent of ["agent-1", undefined]) {
        expect(Keys.choose("onboard", selection, agent)).toEqual({ _tag: "Account" })
      }
    }
  })

  it("U11 the other operations: the agent's key when given, else as the selection says", () => {
    for (const operation of operations.filter((op) => op !== "onboard")) {
      expect(Keys.choose(operation, "agent-or-account", "a")).toEqual({ _tag: "Agent", agent: "a" })
      expect(Keys.choose(operation, "agent-or-account", undefined)).toEqual({ _tag: "Account" })
      expect(Keys.choose(operation, "account", "a")).toEqual({ _tag: "Account" })
      expect(Keys.choose(operation, "account", undefined)).toEqual({ _tag: "Account" })
      expect(Keys.choose(operation, "agent", "a")).toEqual({ _tag: "Agent", agent: "a" })
      expect(Keys.choose(operation, "agent", undefined)).toEqual({ _tag: "NoAgent" })
    }
    expect(Keys.defaultSelection).toBe("agent-or-account")
    expect(Keys.noAgentId).toBe("(none given)")
  })

  it("U11 an agent's key is used only for an operation that is not onboard, and only when an agent is given", () => {
    fc.assert(fc.property(
      fc.constantFrom(...operations),
      fc.constantFrom(...selections),
      fc.option(fc.string(), { nil: undefined }),
      (operation, selection, agent) => {
        const choice = Keys.choose(operation, selection, agent)
        if (choice._tag === "Agent") {
          expect(operation).not.toBe("onboard")
          expect(selection).not.toBe("account")
          expect(choice.agent).toBe(agent)
        }
        if (choice._tag === "NoAgent") expect([selection, agent]).toEqual(["agent", undefined])
      }
    ))
  })
})

describe("Keys: a usable key (U12)", () => {
  it("U12 an empty or blank key is no key; the account key comes from AGENT_SESSION_API_KEY", () => {
    expect(["sk-1", " k "].map(Keys.isUsable)).toEqual([true, true])
    expect(["", " ", "\t\n"].map(Keys.isUsable)).toEqual([false, false, false])
    expect(Keys.ENV_API_KEY).toBe("AGENT_SESSION_API_KEY")
  })
})

describe("Keys: the agent an operation names", () => {
  it("an id, a key reference's id, or none", () => {
    expect(Keys.agentIdOf("a1")).toBe("a1")
    expect(Keys.agentIdOf({ agentId: "a2" })).toBe("a2")
    expect(Keys.agentIdOf(undefined)).toBeUndefined()
  })
})
