import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import * as Errors from "effect-agent-session/Errors"

const root = join(import.meta.dirname, "..")
const read = (path: string): string => readFileSync(join(root, path), "utf8")

/** The text of a `#### \`Tag\`` section, up to the next heading. */
const headingSection = (doc: string, tag: string): string | undefined => {
  const start = doc.indexOf(`#### \`${tag}\``)
  if (start < 0) return undefined
  const rest = doc.slice(start + 1)
  const end = rest.search(/\n#{2,4} /)
  return end < 0 ? rest : rest.slice(0, end)
}

/** The rows of `| \`Tag\` |` table lines, joined (the catalogue's row and any other table's). */
const tableRow = (doc: string, tag: string): string | undefined => {
  const rows = doc.split("\n").filter((line) => line.startsWith(`| \`${tag}\` |`))
  return rows.length === 0 ? undefined : rows.join("\n")
}

describe("docs", () => {
  it("U19 docs/errors.md describes every error class and its fields", () => {
    const doc = read("docs/errors.md")
    const shared = Object.keys(Errors.HttpErrorFields)
    const common = doc.slice(doc.indexOf("Every status error has the same fields"), doc.indexOf("#### `TransportError`"))
    for (const shape of shared) assert.include(common, `| \`${shape}\` |`, `HttpErrorFields.${shape}`)
    for (const member of [...Errors.AgentSessionError.members, ...ClusterErrors.ClusterError.members]) {
      const tag = member._tag
      const heading = headingSection(doc, tag)
      const row = tableRow(doc, tag)
      const section = heading ?? row
      if (section === undefined) return assert.fail(`docs/errors.md does not describe ${tag}`)
      for (const field of Object.keys(member.fields)) {
        if (field === "_tag") continue
        if (heading === undefined && shared.includes(field)) continue
        assert.include(section, `\`${field}\``, `docs/errors.md: field ${field} of ${tag} is not described`)
      }
      if (heading !== undefined) assert.include(heading, "**When**", tag)
    }
    // The unions themselves: test/Errors.channels.test.ts checks their members against the types.
    for (const union of ["HttpStatusError", "AgentApiError", "FrameError", "EventStreamError", "RespondError", "RunError", "AgentSessionError", "ClusterError"]) {
      assert.isDefined(tableRow(doc, union), union)
    }
  })

  it("docs/reliability.md has U01..U23 in order, each with a decision and its proof", () => {
    const doc = read("docs/reliability.md")
    const ids = [...doc.matchAll(/^## (U\d{2}) /gm)].map((match) => match[1])
    assert.deepStrictEqual(ids, Array.from({ length: 23 }, (_, i) => `U${String(i + 1).padStart(2, "0")}`))
    for (const section of doc.split(/^## /m).filter((s) => /^U\d{2} /.test(s))) {
      assert.include(section, "**Decision.**", section.slice(0, 3))
      assert.include(section, "**Proved by.**", section.slice(0, 3))
    }
  })

  it("every test file docs/reliability.md cites holds tests named with the section's id", () => {
    const doc = read("docs/reliability.md")
    let cited = 0
    for (const section of doc.split(/^## /m).filter((s) => /^U\d{2} /.test(s))) {
      const id = section.slice(0, 3)
      const proof = section.slice(section.indexOf("**Proved by.**"))
      for (const [, file = ""] of proof.matchAll(/`((?:packages\/(?:core|effect3)\/)?test\/[^`]+\.test\.ts)`/g)) {
        cited += 1
        assert.isTrue(existsSync(join(root, file)), `${id}: ${file} does not exist`)
        const source = read(file)
        assert.isTrue(source.includes(`"${id} `) || source.includes(`\`${id} `), `${id}: ${file} has no test named "${id} ..."`)
      }
    }
    assert.isAtLeast(cited, 40)
  })
})
