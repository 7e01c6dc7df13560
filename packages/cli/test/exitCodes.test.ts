/**
 * Every error family has an exit code (packages/cli/src/ExitCode.ts), and docs/cli.md's table
 * says the same: the families are read from the Errors module (every member of the
 * `AgentSessionError` schema union), so a family added there and forgotten in the command line's
 * table or in its documentation fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as ExitCode from "../src/ExitCode.js"
import * as Errors from "effect-agent-session/Errors"

/** Every error family of the SDK: the `_tag` of each member of the union's schema. */
const families: ReadonlyArray<Errors.AgentSessionError["_tag"]> = Errors.AgentSessionError.members.map((member) => member._tag)

/** docs/cli.md's "Exit codes" table: each code with the error names (in backticks) of its row. */
const documented = (): ReadonlyMap<number, ReadonlyArray<string>> => {
  const text = readFileSync(new URL("../../../docs/cli.md", import.meta.url), "utf8")
  const section = text.slice(text.indexOf("## Exit codes"))
  const rows = new Map<number, ReadonlyArray<string>>()
  for (const line of section.split("\n").slice(1)) {
    if (line.startsWith("## ")) break
    const cells = /^\| (\d+) \|[^|]*\|([^|]*)\|$/.exec(line)
    if (cells === null) continue
    rows.set(Number(cells[1]), [...(cells[2] ?? "").matchAll(/`(\w+)`/g)].map((match) => match[1]!))
  }
  return rows
}

describe("exit codes per error family", () => {
  it("the families are read from the Errors module", () => {
    expect(families.length).toBeGreaterThan(30)
    expect(new Set(families).size).toBe(families.length)
    expect(families).toContain("NeverConnected")
  })

  it("every family has an exit code in the command line's table, and the table names nothing else", () => {
    const codes = new Set<number>(Object.values(ExitCode.ExitCode))
    expect(Object.keys(ExitCode.forTag).sort()).toEqual([...families].sort())
    for (const family of families) {
      const code = ExitCode.forTag[family]
      expect(codes.has(code), family).toBe(true)
      // An error is never "success", "a bug", a signal, or onboard's own code.
      expect([0, 1, 9, 130, 143], family).not.toContain(code)
      expect(ExitCode.forError({ _tag: family } as Errors.AgentSessionError), family).toBe(code)
    }
    // The family the table once left out: the event channel never opened.
    expect(ExitCode.forTag.NeverConnected).toBe(ExitCode.ExitCode.connectionLost)
  })

  it("docs/cli.md's table names every family once, in the row of its exit code", () => {
    const rows = documented()
    expect([...rows.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130, 143])
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual(Object.values(ExitCode.ExitCode).sort((a, b) => a - b))
    for (const family of families) {
      const named = [...rows].filter(([, names]) => names.includes(family)).map(([code]) => code)
      expect(named, `${family} in docs/cli.md's exit codes`).toEqual([ExitCode.forTag[family]])
    }
  })
})
