/**
 * The packages as a user gets them: `npm pack` the library and the published workspace packages
 * (their `prepack` builds `dist/`), install the tarballs into a fresh application with exactly the
 * README's install commands (the package names replaced by the tarballs, and the protocol core and
 * the editions' shared glue, which the library depends on, taken from their tarballs by
 * `overrides` entries as the registry would give them; from the local npm cache where it has
 * them), type-check the README's first-session program and the guide's test-kit example with
 * strict TypeScript and `skipLibCheck: false`, then run the program against the installed
 * command line's `simulate` (a child process) and the test-kit example with the installed vitest.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"

const root = Path.resolve(import.meta.dirname, "../..")
const read = (file: string): string => Fs.readFileSync(Path.join(root, file), "utf8")

/** The fenced blocks of a Markdown section (from its heading to the next heading of any level <= 2). */
const blocks = (document: string, heading: string, lang: string): Array<string> => {
  const start = document.indexOf(`\n${heading}\n`)
  assert.isAtLeast(start, 0, `no "${heading}"`)
  const rest = document.slice(start + heading.length + 2)
  const end = rest.search(/\n## /)
  const section = end < 0 ? rest : rest.slice(0, end)
  return [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "")
}

/** The block whose first line is `// <name>` (whatever its info string: ```` ```ts test ````, ...). */
const named = (document: string, name: string): string => {
  const found = [...document.matchAll(/```ts[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? "").find((code) =>
    code.startsWith(`// ${name}\n`)
  )
  assert.isDefined(found, `no ts block named ${name}`)
  return found ?? ""
}

interface Ran {
  readonly code: number | null
  readonly output: string
}

/** Runs a command to its end; never fails (the exit code and output are the result). */
const exec = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  Effect.async<Ran>((resume) => {
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

const npm = process.platform === "win32" ? "npm.cmd" : "npm"

/** The environment of the children: no AGENT_SESSION_* or npm_* of the machine running the tests. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !name.startsWith("AGENT_SESSION_") && !name.startsWith("npm_") && name !== "EFFECT_LOG_LEVEL" &&
      name !== "NODE_OPTIONS" && name !== "VITEST" && !name.startsWith("VITEST_")
    )
  ),
  NO_COLOR: "1",
  ...extra
})

const ok = (ran: Ran, what: string) => assert.strictEqual(ran.code, 0, `${what}:\n${ran.output}`)

describe("the packed packages in a fresh application", () => {
  it.live("install with the README's commands, type-check strictly, run the first session and the test kit", () =>
    Effect.gen(function*() {
      const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "eas-consumer-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(tmp, { recursive: true, force: true })))
      const packs = Path.join(tmp, "packs")
      const app = Path.join(tmp, "app")
      Fs.mkdirSync(packs)
      Fs.mkdirSync(app)

      // Pack the packages: each `prepack` compiles its own dist/ (the library's against the core's
      // freshly built declarations, the command line's against the library's).
      const core = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/core"], root, cleanEnv())
      const shell = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/shell"], root, cleanEnv())
      const library = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/effect3"], root, cleanEnv())
      const simulatorPacked = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/simulator"], root, cleanEnv())
      const clusterPacked = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/cluster"], root, cleanEnv())
      const cli = yield* exec(npm, ["pack", "--json", "--pack-destination", packs, "-w", "packages/cli"], root, cleanEnv())
      ok(core, "npm pack -w packages/core")
      ok(shell, "npm pack -w packages/shell")
      ok(library, "npm pack -w packages/effect3")
      ok(simulatorPacked, "npm pack -w packages/simulator")
      ok(clusterPacked, "npm pack -w packages/cluster")
      ok(cli, "npm pack -w packages/cli")
      const listing = (ran: Ran): { filename: string; files: Array<{ path: string }> } => {
        const json = ran.output.slice(ran.output.indexOf("["))
        const parsed = JSON.parse(json.slice(0, json.lastIndexOf("]") + 1)) as Array<{
          filename: string
          files: Array<{ path: string }>
        }>
        const [first] = parsed
        assert.isDefined(first)
        return first!
      }
      const corePack = listing(core)
      const shellPack = listing(shell)
      const libraryPack = listing(library)
      const cliPack = listing(cli)
      const simulatorPack = listing(simulatorPacked)
      const clusterPack = listing(clusterPacked)
      for (const file of ["dist/src/index.js", "dist/src/index.d.ts", "dist/src/ClusterErrors.js", "dist/binding/ClusterErrors.js", "README.md"]) {
        assert.include(clusterPack.files.map((f) => f.path), file)
      }
      for (const file of ["dist/index.js", "dist/index.d.ts", "dist/Simulator.js", "dist/main.js"]) {
        assert.include(simulatorPack.files.map((f) => f.path), file)
      }
      for (const file of ["dist/index.js", "dist/index.d.ts", "dist/Sse.js"]) {
        assert.include(corePack.files.map((f) => f.path), file)
      }
      for (const file of ["dist/index.js", "dist/index.d.ts", "dist/KitReplay.js"]) {
        assert.include(shellPack.files.map((f) => f.path), file)
      }
      const files = libraryPack.files.map((f) => f.path)
      for (const file of ["dist/src/index.js", "dist/src/index.d.ts", "dist/src/index.d.ts.map", "dist/src/index.js.map", "dist/src/testing/index.d.ts", "dist/binding/internal/orphan.js", "binding/internal/orphan.ts"]) {
        assert.include(files, file)
      }
      assert.include(cliPack.files.map((f) => f.path), "dist/main.js")
      assert.notInclude(cliPack.files.map((f) => f.path).join(" "), ".ts ")

      // A fresh application, installed with exactly the README's commands.
      // The core and the shared glue are not on the registry from this checkout: `overrides` gives
      // their tarballs wherever the library asks for them (the README's commands do not name them:
      // they come with the library).
      Fs.writeFileSync(
        Path.join(app, "package.json"),
        JSON.stringify({
          name: "consumer-app",
          version: "1.0.0",
          private: true,
          type: "module",
          overrides: {
            "effect-agent-session-core": `file:${Path.join(packs, corePack.filename)}`,
            "effect-agent-session-shell": `file:${Path.join(packs, shellPack.filename)}`,
            "effect-agent-session-cluster": `file:${Path.join(packs, clusterPack.filename)}`,
            // Written as npm writes the direct dependency the README's install adds (an override
            // must read the same as a direct dependency on the same package).
            "effect-agent-session-simulator": `file:../packs/${simulatorPack.filename}`
          }
        }, null, 2)
      )
      const tarballs: Record<string, string> = {
        "effect-agent-session": Path.join(packs, libraryPack.filename),
        "effect-agent-session-cli": Path.join(packs, cliPack.filename),
        "effect-agent-session-simulator": Path.join(packs, simulatorPack.filename)
      }
      const commands = blocks(read("README.md"), "## Install", "sh")[0]?.split("\n")
        .map((line) => line.replace(/#.*$/, "").trim())
        .filter((line) => line.startsWith("npm install")) ?? []
      assert.isAtLeast(commands.length, 3, "the README's install commands")
      for (const command of commands) {
        const args = command.split(/\s+/).slice(1).map((arg) => tarballs[arg] ?? arg)
        ok(yield* exec(npm, [...args, "--prefer-offline", "--no-audit", "--no-fund"], app, cleanEnv()), command)
      }
      const installed = JSON.parse(Fs.readFileSync(Path.join(app, "node_modules/effect-agent-session/package.json"), "utf8")) as {
        dependencies: Record<string, string>
      }
      assert.deepStrictEqual(Object.keys(installed.dependencies), ["effect-agent-session-core", "effect-agent-session-shell", "ws"])
      const installedCore = JSON.parse(
        Fs.readFileSync(Path.join(app, "node_modules/effect-agent-session-core/package.json"), "utf8")
      ) as { dependencies?: Record<string, string> }
      assert.isUndefined(installedCore.dependencies)
      const installedShell = JSON.parse(
        Fs.readFileSync(Path.join(app, "node_modules/effect-agent-session-shell/package.json"), "utf8")
      ) as { dependencies?: Record<string, string> }
      assert.deepStrictEqual(Object.keys(installedShell.dependencies ?? {}), ["effect-agent-session-core"])
      // The papers and the docs the README links to are installed with the packages.
      for (
        const file of [
          "effect-agent-session/LICENSE",
          "effect-agent-session/CHANGELOG.md",
          "effect-agent-session/docs/sessions.md",
          "effect-agent-session-cli/LICENSE",
          "effect-agent-session-cli/CHANGELOG.md",
          "effect-agent-session-cli/README.md",
          "effect-agent-session-simulator/LICENSE",
          "effect-agent-session-simulator/CHANGELOG.md",
          "effect-agent-session-simulator/README.md",
          "effect-agent-session-core/LICENSE",
          "effect-agent-session-core/CHANGELOG.md",
          "effect-agent-session-core/README.md",
          "effect-agent-session-shell/LICENSE",
          "effect-agent-session-shell/CHANGELOG.md",
          "effect-agent-session-shell/README.md"
        ]
      ) {
        assert.isTrue(Fs.existsSync(Path.join(app, "node_modules", file)), file)
      }

      // The README's program and the guide's test-kit example, type-checked strictly.
      const readme = read("README.md")
      const guide = read("docs/testing.md")
      Fs.writeFileSync(Path.join(app, "first-session.ts"), named(readme, "first-session.ts"))
      Fs.writeFileSync(Path.join(app, "app.ts"), named(guide, "app.ts"))
      Fs.writeFileSync(Path.join(app, "app.test.ts"), named(guide, "app.test.ts"))
      Fs.writeFileSync(
        Path.join(app, "entries.ts"),
        [
          `import * as Sdk from "effect-agent-session"`,
          `import * as Testing from "effect-agent-session/testing"`,
          `import * as Sim from "effect-agent-session-simulator"`,
          `import * as Answer from "effect-agent-session/Answer"`,
          `console.log(typeof Sdk.AgentSessions.run, typeof Testing.AgentSessionsTest.layer, typeof Sim.Simulator.make, typeof Answer.grant)`
        ].join("\n") + "\n"
      )
      Fs.writeFileSync(
        Path.join(app, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            skipLibCheck: false,
            noEmit: true,
            types: ["node"]
          },
          include: ["*.ts"]
        })
      )
      const bin = (name: string) => Path.join(app, "node_modules/.bin", name)
      const typecheck = Effect.map(
        exec(bin("tsc"), ["-p", "."], app, cleanEnv()),
        (ran) => ok(ran, "tsc (strict, skipLibCheck false)")
      )

      const runs = Effect.gen(function*() {
        const entries = yield* exec(process.execPath, ["--import", "tsx", "entries.ts"], app, cleanEnv())
        ok(entries, "every entry point")
        assert.strictEqual(entries.output.trim(), "function function function function")

        // The installed command line's simulator, then the README's program against it.
        const simulator = ChildProcess.spawn(
          bin("effect-agent-session"),
          ["simulate", "--port", "0", "--json", "--frame-delay", "10"],
          { cwd: app, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] }
        )
        const exited = new Promise<number | null>((resolve) => simulator.on("exit", (code) => resolve(code)))
        yield* Effect.addFinalizer(() => Effect.sync(() => simulator.kill("SIGKILL")))
        let out = ""
        simulator.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
        const address = yield* Effect.async<{ baseUrl: string; accountKey: string }, Error>((resume) => {
          const timer = setInterval(() => {
            const line = out.split("\n").find((l) => l.startsWith("{") && l.endsWith("}"))
            if (line !== undefined) {
              clearInterval(timer)
              resume(Effect.succeed(JSON.parse(line)))
            } else if (simulator.exitCode !== null) {
              clearInterval(timer)
              resume(Effect.fail(new Error(`simulate exited ${simulator.exitCode}: ${out}`)))
            }
          }, 50)
          return Effect.sync(() => clearInterval(timer))
        }).pipe(Effect.timeout("90 seconds"), Effect.orDie)

        const session = yield* exec(
          process.execPath,
          ["--import", "tsx", "first-session.ts"],
          app,
          cleanEnv({ AGENT_SESSION_BASE_URL: address.baseUrl, AGENT_SESSION_API_KEY: address.accountKey })
        )
        ok(session, "the README's first session")
        assert.include(session.output, "Complete")
        assert.match(session.output, /^cost: \d+(\.\d+)?$/m)

        simulator.kill("SIGTERM")
        const code = yield* Effect.promise(() => exited).pipe(Effect.timeout("60 seconds"), Effect.orDie)
        assert.strictEqual(code, 143, "simulate ends with 143 on SIGTERM")

        ok(yield* exec(bin("vitest"), ["run", "--reporter=dot"], app, cleanEnv({ CI: "1" })), "the test-kit example")
      })

      yield* Effect.all([typecheck, runs], { concurrency: 2, discard: true })
    }).pipe(Effect.scoped), { timeout: 300_000 })
})
