/**
 * `Contract`: the HTTP API's contract built once per dialect value, each build's authentication
 * middleware under a key of its own.
 */
import { describe, expect, it } from "vitest"
import { Dialect } from "effect-agent-session-core"
import { Contract } from "../src/index.js"

describe("Contract.perDialect", () => {
  it("builds once per dialect value; an equal dialect of another value is built again", () => {
    const built: Array<string> = []
    const make = Contract.perDialect((dialect: Dialect.Dialect) => {
      built.push(dialect.name)
      return { dialect }
    })
    const first = make(Dialect.documented)
    expect(make(Dialect.documented)).toBe(first)
    expect(first.dialect).toBe(Dialect.documented)
    const observed = make(Dialect.observed)
    expect(observed.dialect).toBe(Dialect.observed)
    const copy = Dialect.make({ base: Dialect.documented })
    expect(make(copy)).not.toBe(first)
    expect(built).toEqual(["documented", "observed", copy.name])
  })
})

describe("Contract.authenticationKey", () => {
  it("names the dialect, and is unique to each build", () => {
    const a = Contract.authenticationKey("documented")
    const b = Contract.authenticationKey("documented")
    expect(a).toMatch(/^effect-agent-session\/ServiceApi\/Authentication\/documented\/\d+$/)
    expect(b).not.toBe(a)
    expect(Contract.authenticationKey("observed")).toContain("/Authentication/observed/")
  })
})
