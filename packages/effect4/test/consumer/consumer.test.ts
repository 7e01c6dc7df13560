/**
 * The Effect 4 edition as a user gets it: `npm pack` the protocol core, the editions' shared glue
 * and this package (their `prepack` builds `dist/`), install the tarballs into a fresh application
 * with exactly the install commands of this package's README (the package name replaced by its
 * tarball, the core's and the shared glue's tarballs beside it; from the local npm cache where it
 * has them), type-check the README's program and every entry point with strict TypeScript and
 * `skipLibCheck: false`, then run the programs against the simulator (the root's command line, a
 * child process). The first-session program is checked to be the root README's (the Effect 3
 * edition's) with only the package name changed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { blocks, cleanEnv, exec, named, npm, ok, packBoth, readme } from "../helpers/consumer.js"
import { repositoryRoot, spawnSimulator } from "../helpers/simulator.js"

describe("the packed Effect 4 edition in a fresh Effect 4.1 application", () => {
  it.live("installs with its README's commands, type-checks strictly, creates a session, and runs the Effect 3 edition's first program (only the package name changed) against the simulator", () =>
    Effect.gen(function*() {
      const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "eas-effect4-consumer-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(tmp, { recursive: true, force: true })))
      const packs = Path.join(tmp, "packs")
      const app = Path.join(tmp, "app")
      Fs.mkdirSync(packs)
      Fs.mkdirSync(app)

      // Pack the core, the shared glue and this package: each prepack builds its own dist/.
      const { core: corePack, shell: shellPack, edition: editionPack } = yield* packBoth(packs, repositoryRoot)
      for (const file of ["dist/src/index.js", "dist/src/index.d.ts", "dist/src/index.d.ts.map", "dist/src/index.js.map", "dist/src/testing/index.d.ts", "dist/binding/internal/orphan.js", "binding/internal/orphan.ts"]) {
        assert.include(editionPack.files, file)
      }
      assert.notInclude(editionPack.files.join(" "), "toolchain/")
      assert.notInclude(editionPack.files.join(" "), "runtimes/")
      assert.notInclude(editionPack.files.join(" "), "dist/src/internal/../")

      // A fresh application, installed with exactly the README's commands.
      Fs.writeFileSync(
        Path.join(app, "package.json"),
        JSON.stringify({ name: "consumer-app", version: "1.0.0", private: true, type: "module" }, null, 2)
      )
      const tarball = Path.join(packs, editionPack.filename)
      const coreTarball = Path.join(packs, corePack.filename)
      const shellTarball = Path.join(packs, shellPack.filename)
      const commands = blocks(readme, "## Install", "sh")[0]?.split("\n")
        .map((line) => line.replace(/#.*$/, "").trim())
        .filter((line) => line.startsWith("npm install")) ?? []
      assert.isAtLeast(commands.length, 2, "the README's install commands")
      for (const command of commands) {
        const args = command.split(/\s+/).slice(1).flatMap((arg) =>
          // The core and the shared glue are not on the registry yet: their tarballs go beside the edition's.
          arg === "effect-agent-session-effect4" ? [tarball, coreTarball, shellTarball] : [arg]
        )
        ok(yield* exec(npm, [...args, "--prefer-offline", "--no-audit", "--no-fund"], app, cleanEnv()), command)
      }
      const installed = JSON.parse(
        Fs.readFileSync(Path.join(app, "node_modules/effect-agent-session-effect4/package.json"), "utf8")
      ) as { dependencies: Record<string, string> }
      assert.deepStrictEqual(Object.keys(installed.dependencies), ["effect-agent-session-core", "effect-agent-session-shell"])
      const effectVersion = (JSON.parse(Fs.readFileSync(Path.join(app, "node_modules/effect/package.json"), "utf8")) as {
        version: string
      }).version
      assert.match(effectVersion, /^4\./)

      // The README's programs and every entry point, type-checked strictly.
      Fs.writeFileSync(Path.join(app, "create-session.ts"), named(readme, "create-session.ts"))
      const firstSession = named(readme, "first-session.ts")
      const rootReadme = Fs.readFileSync(Path.join(repositoryRoot, "README.md"), "utf8")
      assert.strictEqual(
        firstSession,
        named(rootReadme, "first-session.ts").replace(`from "effect-agent-session"`, `from "effect-agent-session-effect4"`),
        "the Effect 3 edition's first session, with only the package name changed"
      )
      Fs.writeFileSync(Path.join(app, "first-session.ts"), firstSession)
      Fs.writeFileSync(
        Path.join(app, "entries.ts"),
        [
          `import * as Sdk from "effect-agent-session-effect4"`,
          `import * as Testing from "effect-agent-session-effect4/testing"`,
          `import * as Answer from "effect-agent-session-effect4/Answer"`,
          `console.log(typeof Sdk.AgentSessions.run, typeof Sdk.NodeAgentSessions.layerConfig, typeof Sdk.EventStream.layerSse, typeof Testing.AgentSessionsTest.layer, typeof Answer.grant)`
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
      ok(yield* exec(bin("tsc"), ["-p", "."], app, cleanEnv()), "tsc (strict, skipLibCheck false)")

      const entries = yield* exec(process.execPath, ["--import", "tsx", "entries.ts"], app, cleanEnv())
      ok(entries, "every entry point")
      assert.strictEqual(entries.output.trim(), "function function function function function")

      // The README's program against the simulator (the root's command line, a child process).
      const sim = yield* spawnSimulator({ ask: "permission" })
      const session = yield* exec(
        process.execPath,
        ["--import", "tsx", "create-session.ts"],
        app,
        cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      )
      ok(session, "the README's program")
      assert.match(session.output, /^session: \S+$/m)

      // The first session, whole: created, watched over WebSocket, the request granted, complete.
      const run = yield* exec(
        process.execPath,
        ["--import", "tsx", "first-session.ts"],
        app,
        cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
      )
      ok(run, "the README's first session")
      const lines = run.output.trim().split("\n")
      assert.strictEqual(lines[0], "Started")
      assert.include(lines, "ExternalResourceRequested")
      assert.include(lines, "ExternalResourceGranted")
      assert.include(lines, "Complete")
      assert.match(run.output, /^response: .+$/m)
      assert.match(run.output, /^cost: \d+(\.\d+)?$/m)
    }), 600_000)
})
