/**
 * Every program of the README and of `docs/*.md` runs to its end against the default simulator
 * (`Simulator.make()`: it asks for permission, as `effect-agent-session simulate` does), within a
 * bound, so that a program copied from the docs does what the page says. What a block is comes
 * from its info string (helpers/DocBlocks.ts):
 *
 * - a program that runs itself (`NodeRuntime.runMain`, ...) runs as a child process, configured
 *   only by the variables a user sets (`AGENT_SESSION_API_KEY`, `AGENT_SESSION_BASE_URL`, and
 *   `OTEL_EXPORTER_OTLP_ENDPOINT` for the OpenTelemetry one, pointed at a collector that records
 *   what it receives), and must exit with 0;
 * - a program that defines `program` runs in this process with `NodeAgentSessions.layerConfig()`
 *   provided from the same variables, and must succeed;
 * - a test block (```` ```ts test ````) runs here, its tests registered with these;
 * - fragments and PostgreSQL programs are compiled only (test/docs-examples.test.ts).
 */
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { execFile } from "node:child_process"
import { rmSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { runsItself, writeBlocks, type Written } from "effect-agent-session-test-support/DocBlocks"
import { root } from "effect-agent-session-test-support/JsDoc"

/** `it`'s Effect methods as @effect/vitest made them, before `layer(...)` below replaces them. */
const pristine = { ...it }

/** The bound of one program: a program that has not ended by then never will. */
const bound = 60_000

// One directory per run: other runs of the suite may be under way in the same working tree.
const outDir = join(root, ".tmp", `doc-programs-${process.pid}`)
rmSync(outDir, { recursive: true, force: true })
const written = writeBlocks(outDir)
afterAll(() => rmSync(outDir, { recursive: true, force: true }))

/** The variables a user sets to point a program at the simulator. */
const variables = (sim: Simulator.Service): Record<string, string> => ({
  AGENT_SESSION_API_KEY: sim.accountKey,
  AGENT_SESSION_BASE_URL: sim.baseUrl
})

/** An OTLP/HTTP collector on loopback that answers 200 and records the paths it was sent (`/v1/traces`, ...). */
const collector = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly paths: Array<string>; readonly server: Http.Server }>((resume) => {
    const paths: Array<string> = []
    const server = Http.createServer((request, response) => {
      paths.push(request.url ?? "")
      request.resume()
      request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"))
    })
    server.listen(0, "127.0.0.1", () => {
      resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, server }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
)

/** What the SDK's layer provides: all a `program` of the docs may need. */
type Services = Layer.Layer.Success<ReturnType<typeof NodeAgentSessions.layerConfig>>

/** Runs a program that runs itself, with `tsx`, as a user would; never fails: the exit code and output are the result. */
const runChild = (path: string, env: Record<string, string>) =>
  Effect.async<{ readonly code: number | null; readonly output: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", path],
      {
        cwd: root,
        // The user's environment, without any AGENT_SESSION_* of the machine running the tests.
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AGENT_SESSION_"))),
          NO_COLOR: "1",
          ...env
        },
        timeout: bound,
        maxBuffer: 8 * 1024 * 1024
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Imports a block's module and runs its `program` with the SDK's layer read from the variables.
 * What it prints with `Console` is kept (shown if it fails), not written to the suite's output.
 */
const runProgram = (path: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    const module: Record<string, unknown> = yield* Effect.promise(() => import(pathToFileURL(path).href))
    const program = module["docProgram"]
    if (!Effect.isEffect(program)) return yield* Effect.dieMessage(`${path}: docProgram is not an Effect`)
    const output: Array<string> = []
    const keep = (...args: ReadonlyArray<unknown>) => Effect.sync(() => void output.push(args.map(String).join(" ")))
    const console: Console.Console = { ...(yield* Effect.console), log: keep, info: keep, warn: keep, error: keep, debug: keep }
    const exit = yield* (program as Effect.Effect<unknown, unknown, Services>).pipe(
      Effect.provide(NodeAgentSessions.layerConfig()),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.withConsole(console),
      Effect.timeoutFail({ duration: bound, onTimeout: () => `did not end within ${bound / 1000} s` }),
      Effect.exit
    )
    return { exit, output }
  })

const where = ({ block }: Written) => `${block.file}:${block.line}`

describe("the programs of the docs", () => {
  it("there are programs to run, in the README and the guide, some of them running themselves", () => {
    const programs = written.filter(({ block }) => block.kind === "program")
    assert.isAtLeast(programs.length, 10)
    assert.isAtLeast(programs.filter(({ block }) => runsItself(block)).length, 3)
    assert.includeMembers([...new Set(programs.map(({ block }) => block.file))], ["README.md", "docs/sessions.md", "docs/testing.md"])
  })

  layer(Simulator.layer(), { excludeTestServices: true, timeout: 60_000 })((it) => {
    for (const entry of written.filter(({ block }) => block.kind === "program")) {
      if (runsItself(entry.block)) {
        it.effect(`${where(entry)} runs to its end (a child process)`, () =>
          Effect.gen(function*() {
            const sim = yield* Simulator.Simulator
            const otlp = yield* collector
            const ran = yield* runChild(entry.path, { ...variables(sim), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })
            assert.strictEqual(ran.code, 0, `${where(entry)} exited with ${ran.code}\n${ran.output}`)
            // The OpenTelemetry program exported the SDK's spans and metrics.
            if (entry.block.code.includes("@effect/opentelemetry")) {
              assert.includeMembers(otlp.paths, ["/v1/traces", "/v1/metrics"], where(entry))
            }
          }).pipe(Effect.scoped), bound + 30_000)
      } else {
        it.effect(`${where(entry)} runs its program to its end`, () =>
          Effect.gen(function*() {
            const sim = yield* Simulator.Simulator
            const { exit, output } = yield* runProgram(entry.path, variables(sim))
            const failure = Exit.isFailure(exit) ? String(exit.cause) : ""
            assert.isTrue(Exit.isSuccess(exit), `${where(entry)}: ${failure}\n${output.join("\n")}`)
          }), bound + 30_000)
      }
    }
  })
})

// The test blocks: their tests run here, as a reader runs them with vitest. `layer(...)` above
// replaced `it.effect` (and the rest) of @effect/vitest's `it` with its own, without the test
// services (@effect/vitest assigns them onto the shared `it`): the blocks get the originals back,
// so that `it.effect` runs them under the `TestClock` as in a reader's file.
for (const entry of written.filter(({ block }) => block.kind === "test")) {
  describe(`${where(entry)} (a test block)`, async () => {
    Object.assign(it, pristine)
    await import(pathToFileURL(entry.path).href)
  })
}
