/**
 * What the consumer tests share (`test/consumer/`): the README's blocks by section or name, a
 * command run to its end, the clean environment of the children, and `npm pack`'s listing.
 */
import { assert } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Effect from "effect/Effect"

/** This package's directory. */
export const packageDir = Path.resolve(import.meta.dirname, "../..")
/** This package's README. */
export const readme = Fs.readFileSync(Path.join(packageDir, "README.md"), "utf8")

/** The fenced blocks of a Markdown section (from its heading to the next `## ` heading). */
export const blocks = (document: string, heading: string, lang: string): Array<string> => {
  const start = document.indexOf(`\n${heading}\n`)
  assert.isAtLeast(start, 0, `no "${heading}"`)
  const rest = document.slice(start + heading.length + 2)
  const end = rest.search(/\n## /)
  const section = end < 0 ? rest : rest.slice(0, end)
  return [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "")
}

/** The block whose first line is `// <name>`. */
export const named = (document: string, name: string): string => {
  const found = [...document.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? "").find((code) =>
    code.startsWith(`// ${name}\n`)
  )
  assert.isDefined(found, `no ts block named ${name}`)
  return found ?? ""
}

/** A command that ran: its exit code and its output. */
export interface Ran {
  readonly code: number | null
  readonly output: string
}

/** Runs a command to its end; never fails (the exit code and output are the result). */
export const exec = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) =>
  Effect.callback<Ran>((resume) => {
    const child = ChildProcess.execFile(
      command,
      args,
      { cwd, env, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

export const npm = process.platform === "win32" ? "npm.cmd" : "npm"

/** The environment of the children: no AGENT_SESSION_* or npm_* of the machine running the tests. */
export const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !name.startsWith("AGENT_SESSION_") && !name.startsWith("npm_") && name !== "NODE_OPTIONS" &&
      name !== "VITEST" && !name.startsWith("VITEST_")
    )
  ),
  NO_COLOR: "1",
  ...extra
})

export const ok = (ran: Ran, what: string) => assert.strictEqual(ran.code, 0, `${what}:\n${ran.output}`)

/** What `npm pack --json` printed: the tarball's name and files. */
export const listing = (ran: Ran): { readonly filename: string; readonly files: ReadonlyArray<string> } => {
  const json = ran.output.slice(ran.output.indexOf("["))
  const parsed = JSON.parse(json.slice(0, json.lastIndexOf("]") + 1)) as Array<{
    filename: string
    files: Array<{ path: string }>
  }>
  const [first] = parsed
  assert.isDefined(first)
  return { filename: first!.filename, files: first!.files.map((file) => file.path) }
}

/**
 * Packs the protocol core, the editions' shared glue and this package into `packs` (each
 * `prepack` builds its `dist/`): the tarballs' names and files.
 */
export const packBoth = (packs: string, root: string) =>
  Effect.gen(function*() {
    const core = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/core"], root, cleanEnv())
    ok(core, "npm pack -w packages/core")
    const shell = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/shell"], root, cleanEnv())
    ok(shell, "npm pack -w packages/shell")
    // This package is not a workspace of the root: packed from its own folder.
    const edition = yield* exec(npm, ["pack", "--json", "--pack-destination", packs], packageDir, cleanEnv())
    ok(edition, "npm pack in packages/effect4")
    return { core: listing(core), shell: listing(shell), edition: listing(edition) }
  })
