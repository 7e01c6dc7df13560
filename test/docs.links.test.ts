/**
 * What a reader copies or follows from the docs works: every `npm install` line of the README
 * files and `docs/` names a range for each Effect package (without one npm picks Effect 4), the
 * cluster's packages are the same set wherever they are installed, every relative link and every
 * `#section` they cite exists (and every `docs/x.md#y` a code comment cites), and the API
 * reference (`npm run docs`) builds without a warning.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, normalize, relative } from "node:path"
import * as Effect from "effect/Effect"

const root = join(import.meta.dirname, "..")
const read = (path: string): string => readFileSync(join(root, path), "utf8")

const documents = [
  "README.md",
  ...readdirSync(join(root, "packages")).map((dir) => `packages/${dir}/README.md`).filter((path) => existsSync(join(root, path))),
  ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)
]

/** The anchors GitHub gives a Markdown file's headings. */
const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, text = ""] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.*)$/gm)) {
    const slug = text.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return result
}

/** The link targets of a Markdown text, code blocks and code spans left out. */
const links = (markdown: string): ReadonlyArray<string> =>
  [...markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1] ?? "")
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))

const targetExists = (from: string, target: string): string | undefined => {
  const [path = "", fragment] = target.split("#")
  const file = path === "" ? from : normalize(join(dirname(from), decodeURIComponent(path)))
  if (!existsSync(join(root, file))) return `${from} -> ${target}: no ${file}`
  if (fragment === undefined || statSync(join(root, file)).isDirectory()) return undefined
  if (!file.endsWith(".md")) return undefined
  return anchors(read(file)).has(fragment) ? undefined : `${from} -> ${target}: no section #${fragment} in ${file}`
}

/** The `npm install` commands of a Markdown text (in its code blocks, a leading `$ ` and a trailing comment dropped, continuations joined). */
const installs = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)]
    .flatMap((match) => (match[1] ?? "").replace(/\\\n\s*/g, " ").split("\n"))
    .map((line) => line.replace(/^\$ /, "").replace(/\s#.*$/, "").trim())
    .filter((line) => line.startsWith("npm install"))

const packagesOf = (command: string) => command.split(/\s+/).slice(2).filter((arg) => !arg.startsWith("-"))
const nameOf = (spec: string) => spec.replace(/^(@?[^@]+)@.*$/, "$1")
const clusterPackage = /^@effect\/(cluster|rpc|sql|sql-pg|workflow|experimental)$/

describe("the docs a reader follows", () => {
  it("every npm install line names a range for each Effect package", () => {
    const bare: Array<string> = []
    let checked = 0
    for (const doc of documents) {
      for (const command of installs(read(doc))) {
        for (const spec of packagesOf(command)) {
          const name = nameOf(spec)
          if (name !== "effect" && !name.startsWith("@effect/")) continue
          checked += 1
          if (!/@[\^~]?\d/.test(spec.slice(1))) bare.push(`${doc}: ${spec} in "${command}"`)
        }
      }
    }
    assert.isAtLeast(checked, 20)
    assert.deepStrictEqual(bare, [])
  })

  it("the cluster's packages are the same set, at the same ranges, wherever they are installed", () => {
    // The Effect 3 line's cluster (`effect-agent-session-cluster`); the Effect 4 line's takes its
    // engine from `effect` itself (an install of `effect@^4`), checked below.
    const sets = documents.flatMap((doc) =>
      installs(read(doc))
        .filter((command) => !packagesOf(command).includes("effect@^4.1"))
        .map((command) => packagesOf(command).filter((spec) => clusterPackage.test(nameOf(spec))).sort().join(" "))
        .filter((set) => set !== "")
        .map((set) => ({ doc, set }))
    )
    assert.includeMembers(sets.map(({ doc }) => doc), ["README.md", "docs/scale-out.md", "docs/cli.md", "packages/cli/README.md"])
    assert.deepStrictEqual([...new Set(sets.map(({ set }) => set))], [sets[0]?.set], JSON.stringify(sets, null, 2))
    assert.strictEqual(sets[0]?.set.split(" ").length, 6)
    // The Effect 4 line's cluster needs only the PostgreSQL driver beside `effect`, at its own
    // line's range (the edition's optional peer).
    const effect4 = JSON.parse(read("packages/effect4/package.json")) as { peerDependencies: Record<string, string> }
    const onEffect4 = documents.flatMap((doc) =>
      installs(read(doc))
        .filter((command) => packagesOf(command).includes("effect@^4.1"))
        .flatMap((command) => packagesOf(command).filter((spec) => clusterPackage.test(nameOf(spec))))
    )
    assert.isNotEmpty(onEffect4)
    for (const spec of onEffect4) assert.strictEqual(spec, `@effect/sql-pg@${effect4.peerDependencies["@effect/sql-pg"]}`)
  })

  it("every relative link and #section of the README files and docs/ exists", () => {
    const dead: Array<string> = []
    let checked = 0
    for (const doc of documents) {
      for (const target of links(read(doc))) {
        checked += 1
        const problem = targetExists(doc, target)
        if (problem !== undefined) dead.push(problem)
      }
    }
    assert.isAtLeast(checked, 40)
    assert.deepStrictEqual(dead, [])
  })

  it("every docs/x.md#section a code comment of the sources, scripts and benchmarks cites exists", () => {
    const sources = (dir: string): Array<string> =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? entry.name === "node_modules" || entry.name === "dist" ? [] : sources(join(dir, entry.name))
          : /\.(ts|mjs)$/.test(entry.name) ? [join(dir, entry.name)] : []
      )
    const packageDirs = readdirSync(join(root, "packages")).flatMap((dir) => [`packages/${dir}/src`, `packages/${dir}/scripts`])
    const files = ["bench", ...packageDirs].filter((dir) => existsSync(join(root, dir))).flatMap(sources)
    const dead: Array<string> = []
    for (const file of files) {
      for (const [, path = "", fragment] of read(file).matchAll(/\bdocs\/([a-z-]+\.md)(?:#([a-z0-9-]+))?/g)) {
        const problem = targetExists("docs/x.md", fragment === undefined ? path : `${path}#${fragment}`)
        if (problem !== undefined) dead.push(`${relative(root, join(root, file))}: ${problem}`)
      }
    }
    assert.deepStrictEqual(dead, [])
  })

  it.live("the API reference of both editions builds without a warning", () =>
    Effect.forEach(["typedoc.json", "packages/effect4/typedoc.json"], (options) =>
      Effect.async<{ readonly code: number; readonly output: string }>((resume) => {
        const bin = join(dirname(createRequire(import.meta.url).resolve("typedoc/package.json")), "bin", "typedoc")
        const child = execFile(
          process.execPath,
          [bin, "--options", options, "--treatWarningsAsErrors", "--emit", "none"],
          { cwd: root, timeout: 120_000, maxBuffer: 8 * 1024 * 1024 },
          (error, stdout, stderr) => {
            const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
            resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
          }
        )
        return Effect.sync(() => child.kill())
      }).pipe(Effect.map(({ code, output }) => {
        assert.strictEqual(code, 0, `${options}\n${output}`)
        assert.notMatch(output, /\[warning\]/, options)
      }))).pipe(Effect.asVoid), 240_000)
})
