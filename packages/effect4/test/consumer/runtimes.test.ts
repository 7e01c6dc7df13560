/**
 * The packed Effect 4 edition in a fresh Bun application and a fresh Deno application, as the
 * README's "Bun and Deno" section says: its install command for each runtime (the package name
 * replaced by the tarball; the protocol core's and the shared glue's tarballs beside it, as they
 * are not on the registry yet), then its `first-session-fetch.ts` run by the runtime, with the section's own
 * command line, against the simulator (on Node, a child process). Bun and Deno are the pinned
 * packages of `runtimes/` (`scripts/runtimes.mjs`); a runtime with none pinned for this platform
 * is skipped, and says so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { blocks, cleanEnv, exec, named, npm, ok, packageDir, packBoth, readme } from "../helpers/consumer.js"
import { repositoryRoot, spawnSimulator } from "../helpers/simulator.js"

/** The binary of a pinned runtime, or why there is none. */
const binaryOf = (runtime: "bun" | "deno"): { readonly binary: string } | { readonly skipped: string } => {
  const printed = ChildProcess.spawnSync(process.execPath, [Path.join(packageDir, "scripts/runtimes.mjs"), "--print", runtime], {
    encoding: "utf8"
  })
  return printed.status === 0 ? { binary: printed.stdout.trim() } : { skipped: printed.stderr.trim() }
}

/** The section's command lines (comments and blank lines aside), from its `sh` blocks. */
const commandLines = (): ReadonlyArray<string> =>
  blocks(readme, "## Bun and Deno", "sh").flatMap((block) =>
    block.split("\n").map((line) => line.replace(/#.*$/, "").trim()).filter((line) => line.length > 0)
  )

/** A command line's leading `NAME=value` assignments and the command after them. */
const parseLine = (line: string) => {
  const words = line.split(/\s+/)
  const env: Record<string, string> = {}
  while (words.length > 0 && /^[A-Z_]+=/.test(words[0] ?? "")) {
    const [name = "", ...value] = (words.shift() ?? "").split("=")
    env[name] = value.join("=")
  }
  return { env, words }
}

describe("the packed Effect 4 edition in a fresh Bun application and a fresh Deno application", () => {
  it.live("installs with the README's command for each runtime and runs its first session against the simulator on Bun and on Deno", () =>
    Effect.gen(function*() {
      const runtimes = { bun: binaryOf("bun"), deno: binaryOf("deno") }
      const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "eas-effect4-runtimes-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(tmp, { recursive: true, force: true })))
      const packs = Path.join(tmp, "packs")
      Fs.mkdirSync(packs)
      const { core, shell, edition } = yield* packBoth(packs, repositoryRoot)
      const tarball = Path.join(packs, edition.filename)
      const coreTarball = Path.join(packs, core.filename)
      const shellTarball = Path.join(packs, shell.filename)
      const program = named(readme, "first-session-fetch.ts")
      const lines = commandLines()
      const sim = yield* spawnSimulator({ ask: "permission" })

      for (const runtime of ["bun", "deno"] as const) {
        const found = runtimes[runtime]
        if ("skipped" in found) {
          console.warn(`skipped on ${runtime}: ${found.skipped}`)
          continue
        }
        const app = Path.join(tmp, `${runtime}-app`)
        Fs.mkdirSync(app)
        // The core and the shared glue are not on the registry yet: Bun takes them from their
        // tarballs through `overrides`.
        Fs.writeFileSync(
          Path.join(app, "package.json"),
          JSON.stringify({
            name: `${runtime}-app`,
            version: "1.0.0",
            private: true,
            type: "module",
            ...(runtime === "bun"
              ? { overrides: { "effect-agent-session-core": coreTarball, "effect-agent-session-shell": shellTarball } }
              : {})
          }, null, 2)
        )
        Fs.writeFileSync(Path.join(app, "first-session-fetch.ts"), program)

        // The install: `bun add ...` for Bun, `npm install ...` for Deno (its node_modules).
        const install = lines.find((line) => line.startsWith(runtime === "bun" ? "bun add " : "npm install "))
        assert.isDefined(install, `the README's install command for ${runtime}`)
        const [tool = "", ...args] = install!.split(/\s+/).flatMap((arg) =>
          arg !== "effect-agent-session-effect4" ? [arg] : runtime === "bun" ? [tarball] : [tarball, coreTarball, shellTarball]
        )
        const installed = runtime === "bun"
          ? yield* exec(found.binary, args, app, cleanEnv())
          : yield* exec(npm, [...args, "--prefer-offline", "--no-audit", "--no-fund"], app, cleanEnv())
        ok(installed, `${tool} ${args.join(" ")}`)
        const effectVersion = (JSON.parse(Fs.readFileSync(Path.join(app, "node_modules/effect/package.json"), "utf8")) as {
          version: string
        }).version
        assert.match(effectVersion, /^4\./)

        // The run: the README's command line, pointed at the simulator.
        const run = lines.find((line) => {
          const { env, words } = parseLine(line)
          return Object.keys(env).length > 0 && words[0] === runtime
        })
        assert.isDefined(run, `the README's command line for ${runtime}`)
        const { env, words } = parseLine(run!)
        assert.deepStrictEqual(Object.keys(env).sort(), ["AGENT_SESSION_API_KEY", "AGENT_SESSION_BASE_URL"])
        const ran = yield* exec(
          found.binary,
          words.slice(1),
          app,
          cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey, DENO_NO_UPDATE_CHECK: "1" })
        )
        ok(ran, `${runtime}: the README's first session`)
        const out = ran.output.trim().split("\n")
        assert.strictEqual(out[0], "Started", runtime)
        assert.include(out, "ExternalResourceRequested", runtime)
        assert.include(out, "ExternalResourceGranted", runtime)
        assert.include(out, "Complete", runtime)
        assert.match(ran.output, /^response: .+$/m, runtime)
        assert.match(ran.output, /^cost: \d+(\.\d+)?$/m, runtime)
      }
    }), 600_000)
})
