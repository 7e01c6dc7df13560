/**
 * `Issues`: a schema's problems as text, the same in both editions.
 */
import { describe, expect, it } from "vitest"
import { Issues } from "../src/index.js"

describe("Issues.line", () => {
  it("`path: message`, the path dotted; the message alone at the root", () => {
    expect(Issues.line({ path: ["a", 0, "b"], message: "is missing" })).toBe("a.0.b: is missing")
    expect(Issues.line({ path: [Symbol("k")], message: "bad" })).toBe("Symbol(k): bad")
    expect(Issues.line({ path: [], message: "Expected an object" })).toBe("Expected an object")
    expect(Issues.line({ message: "Expected a string" })).toBe("Expected a string")
  })
})

describe("Issues.format", () => {
  it("the lines joined by `; `, in order", () => {
    expect(Issues.format([{ path: ["goal"], message: "is missing" }, { path: ["max_actions"], message: "Expected >= 1" }]))
      .toBe("goal: is missing; max_actions: Expected >= 1")
  })

  it("no problem: the text given for none (empty by default)", () => {
    expect(Issues.format([])).toBe("")
    expect(Issues.format([], Issues.noProblemNamed)).toBe("the value does not match the schema")
    expect(Issues.format([{ message: "x" }], Issues.noProblemNamed)).toBe("x")
  })
})

describe("Issues.withoutValues", () => {
  it("names the expected type and the key's problem, never a value", () => {
    expect(Issues.withoutValues.expected("string")).toBe("Expected string (the actual value is too deeply nested to print)")
    expect([Issues.withoutValues.missing, Issues.withoutValues.unexpected, Issues.withoutValues.forbidden])
      .toEqual(["is missing", "is unexpected", "is forbidden"])
  })
})
