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

describe("Keys.Ring: the agents' keys a service knows", () => {
  /** A key in a secret type of its own, as an edition holds it (`Redacted`). */
  const reveal = (key: string) => key

  it("U11 an agent named by id uses the key remembered for it; one given with its key uses that key", () => {
    const ring = new Keys.Ring<string>([{ agentId: "a1", apiKey: "k1" }], reveal)
    expect(ring.select("createSession", "agent-or-account", "a1")).toStrictEqual({ _tag: "Agent", key: "k1" })
    expect(ring.select("connect", "agent", { agentId: "a1", apiKey: "other" })).toStrictEqual({ _tag: "Agent", key: "other" })
    ring.remember({ agentId: "a2", apiKey: "k2" })
    expect(ring.select("getSession", "agent-or-account", "a2")).toStrictEqual({ _tag: "Agent", key: "k2" })
  })

  it("U11 onboard, the account selection and no agent use the account key, as Keys.choose says", () => {
    const ring = new Keys.Ring<string>([{ agentId: "a1", apiKey: "k1" }], reveal)
    expect(ring.select("onboard", "agent", "a1")._tag).toBe("Account")
    expect(ring.select("createSession", "account", "a1")._tag).toBe("Account")
    expect(ring.select("createSession", "agent-or-account", undefined)._tag).toBe("Account")
  })

  it("U06 U12 an unknown agent, an agent without a key or with a blank one is MissingAgentKey naming it", () => {
    const ring = new Keys.Ring<string>([{ agentId: "none", apiKey: undefined }, { agentId: "blank", apiKey: "  " }], reveal)
    for (const agent of ["unknown", "none", "blank"]) {
      expect(ring.select("createSession", "agent-or-account", agent)).toStrictEqual({ _tag: "MissingAgentKey", agentId: agent })
    }
    expect(ring.select("connect", "agent", undefined)).toStrictEqual({ _tag: "MissingAgentKey", agentId: Keys.noAgentId })
  })

  it("secrets lists the account key and every agent key known, revealed, remembered ones included", () => {
    const ring = new Keys.Ring<{ readonly hidden: string }>(
      [{ agentId: "a1", apiKey: { hidden: "k1" } }, { agentId: "a0", apiKey: undefined }],
      (key) => key.hidden
    )
    ring.remember({ agentId: "a2", apiKey: { hidden: "k2" } })
    ring.remember({ agentId: "a1", apiKey: { hidden: "k1b" } })
    expect(ring.secrets({ hidden: "account" })).toStrictEqual(["account", "k1b", "k2"])
    expect(ring.secrets(undefined)).toStrictEqual(["k1b", "k2"])
  })

  it("a key is usable as Keys.isUsable says of its revealed value", () => {
    const ring = new Keys.Ring<{ readonly hidden: string }>(
      [{ agentId: "blank", apiKey: { hidden: " \t" } }, { agentId: "ok", apiKey: { hidden: "k" } }],
      (key) => key.hidden
    )
    expect(ring.select("createSession", "agent", "blank")).toStrictEqual({ _tag: "MissingAgentKey", agentId: "blank" })
    expect(ring.select("createSession", "agent", "ok")).toStrictEqual({ _tag: "Agent", key: { hidden: "k" } })
  })
})
