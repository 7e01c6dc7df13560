/**
 * Every example runs to completion against the simulator, as a child process configured only by
 * the environment variables a user would set (`AGENT_SESSION_API_KEY`, `AGENT_SESSION_BASE_URL`,
 * `AGENT_SESSION_DIALECT`; the WebSocket URL is derived from the base URL), so none of them can rot. `npm start` runs the
 * same way. The children start together when the suite's layer is built (they spend most of their
 * time loading modules); each test awaits its own child and checks its exit code and output,
 * and, where the example answers the agent, what the simulator received.
 */
import { assert, describe, layer } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Dialect from "effect-agent-session/Dialect"
import * as Simulator from "effect-agent-session-simulator/Simulator"

const root = join(import.meta.dirname, "..")

/** Where `record-a-session.ts` writes its recording. */
const recordingPath = join(mkdtempSync(join(tmpdir(), "eas-examples-")), "book-a-table.jsonl")

/** What a child process did. */
interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The variables of the user's environment, without any AGENT_SESSION_* of the machine running the tests. */
const baseEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AGENT_SESSION_")))

/** Runs a command; never fails: the exit code and output are the result. Killed when interrupted. */
const exec = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      command,
      args,
      { cwd: root, env, timeout: 50_000, maxBuffer: 8 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
    return Effect.sync(() => child.kill())
  })

/** Runs an example with `tsx`, pointed at a simulator. */
const example = (file: string, sim: Simulator.Service, env: NodeJS.ProcessEnv = {}): Effect.Effect<Run> =>
  exec(process.execPath, ["--import", "tsx", join("examples", file)], {
    ...baseEnv(),
    AGENT_SESSION_API_KEY: sim.accountKey,
    AGENT_SESSION_BASE_URL: sim.baseUrl,
    AGENT_SESSION_DIALECT: sim.dialect.name,
    ...env
  })

/** `npm start`: it starts its own simulator. */
const npmStart = (dialect: Dialect.DialectName): Effect.Effect<Run> =>
  exec(process.platform === "win32" ? "npm.cmd" : "npm", ["start", "--silent"], {
    ...baseEnv(),
    AGENT_SESSION_DIALECT: dialect
  })

const names = [
  "quickstart",
  "quickstartObserved",
  "quickstartSse",
  "answerPermission",
  "answerInput",
  "answerObserved",
  "pipeline",
  "pipelineObserved",
  "errors",
  "errorsObserved",
  "schedules",
  "app",
  "start",
  "startObserved",
  "cluster",
  "record"
] as const
type Name = (typeof names)[number]

interface Runs {
  readonly sims: {
    readonly permission: Simulator.Service
    readonly input: Simulator.Service
    readonly observed: Simulator.Service
    readonly faults: Simulator.Service
  }
  readonly result: (name: Name) => Effect.Effect<Run>
}

class ExampleRuns extends Context.Tag("test/ExampleRuns")<ExampleRuns, Runs>() {}

const ExampleRunsLive = Layer.scoped(
  ExampleRuns,
  Effect.gen(function*() {
    const scenario = { actions: 3, frameDelay: "2 millis" } as const
    const permission = yield* Simulator.make({ scenario: { ...scenario, ask: "permission" } })
    const input = yield* Simulator.make({ scenario: { ...scenario, ask: "input" } })
    const observed = yield* Simulator.make({ dialect: Dialect.observed, scenario: { ...scenario, ask: "input" } })
    // The first HTTP request answers 503; every session's socket drops after its third event.
    const faults = yield* Simulator.make({
      scenario: { ...scenario, ask: "permission" },
      faults: { http: { fail503: 1 }, ws: { dropAfter: [3] } }
    })

    const children: Record<Name, Effect.Effect<Run>> = {
      quickstart: example("quickstart.ts", permission),
      quickstartObserved: example("quickstart.ts", observed),
      quickstartSse: example("quickstart.ts", observed, { AGENT_SESSION_TRANSPORT: "sse", AGENT_SESSION_WS_URL: "" }),
      answerPermission: example("answer-requests.ts", permission),
      answerInput: example("answer-requests.ts", input),
      answerObserved: example("answer-requests.ts", observed),
      pipeline: example("stream-pipeline.ts", permission),
      pipelineObserved: example("stream-pipeline.ts", observed),
      errors: example("errors.ts", permission),
      errorsObserved: example("errors.ts", observed),
      schedules: example("custom-schedules.ts", faults),
      app: example("testing-your-app.ts", input),
      start: npmStart("documented"),
      startObserved: npmStart("observed"),
      cluster: example("cluster.ts", permission),
      record: example("record-a-session.ts", input, { RECORDING_PATH: recordingPath })
    }
    // All at once, on a 2-core machine: at most 4 children load modules at the same time.
    const semaphore = yield* Effect.makeSemaphore(4)
    const fibers = new Map<Name, Fiber.RuntimeFiber<Run>>()
    for (const name of names) {
      fibers.set(name, yield* Effect.forkScoped(semaphore.withPermits(1)(children[name])))
    }
    return {
      sims: { permission, input, observed, faults },
      result: (name: Name) => Effect.suspend(() => {
        const fiber = fibers.get(name)
        return fiber === undefined ? Effect.dieMessage(`no run ${name}`) : Fiber.join(fiber)
      })
    }
  })
)

/** The run, asserted to have exited with 0. */
const succeeded = (name: Name) =>
  Effect.gen(function*() {
    const runs = yield* ExampleRuns
    const run = yield* runs.result(name)
    assert.strictEqual(run.code, 0, `${name} exited with ${run.code}\n${run.stdout}\n${run.stderr}`)
    return run
  })

/** The session id an example printed after `label`. */
const sessionIdAfter = (stdout: string, label: string): string => {
  const match = new RegExp(`${label}\\s*(\\S+)`).exec(stdout)
  assert.isNotNull(match, `no "${label}" in\n${stdout}`)
  return match?.[1] ?? ""
}

describe("examples", () => {
  layer(ExampleRunsLive, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("quickstart.ts runs a session and prints its outcome (documented dialect)", () =>
      Effect.gen(function*() {
        const { stdout } = yield* succeeded("quickstart")
        assert.include(stdout, "event: Started")
        assert.include(stdout, "event: ExternalResourceRequested")
        assert.match(stdout, /Outcome: Finished "Find the opening hours"/)
        assert.include(stdout, "Actions: 3/10")
        assert.include(stdout, "Total cost: 0.03")
      }))

    it.effect("quickstart.ts runs a session in the observed dialect", () =>
      Effect.gen(function*() {
        const { stdout } = yield* succeeded("quickstartObserved")
        assert.include(stdout, "event: Connected")
        assert.include(stdout, "Actions: 3/10")
        assert.include(stdout, "Total cost: 0.03")
      }))

    it.effect("quickstart.ts runs a session over Server-Sent Events (AGENT_SESSION_TRANSPORT=sse)", () =>
      Effect.gen(function*() {
        const { stdout } = yield* succeeded("quickstartSse")
        assert.include(stdout, "event: Started")
        assert.include(stdout, "event: ExternalResourceGranted")
        assert.include(stdout, "Actions: 3/10")
        assert.include(stdout, "Total cost: 0.03")
      }))

    it.effect("answer-requests.ts approves a permission request", () =>
      Effect.gen(function*() {
        const { sims } = yield* ExampleRuns
        const { stdout } = yield* succeeded("answerPermission")
        assert.match(stdout, /request: admin_permission_request \(.*\) -> grant\n/)
        assert.include(stdout, "state: Open")
        assert.include(stdout, "Actions: 3/10")
        const answers = yield* sims.permission.answers(sessionIdAfter(stdout, "Session"))
        assert.deepStrictEqual(answers.map((a) => [a.resource_type, a.granted, a.input]), [
          ["admin_permission_request", true, undefined]
        ])
      }))

    it.effect("answer-requests.ts grants an input request with the input", () =>
      Effect.gen(function*() {
        const { sims } = yield* ExampleRuns
        const { stdout } = yield* succeeded("answerInput")
        assert.include(stdout, `request: request_user_input`)
        assert.include(stdout, `-> grant with input "jane@example.com"`)
        const answers = yield* sims.input.answers(sessionIdAfter(stdout, "Session"))
        assert.deepStrictEqual(answers.map((a) => [a.resource_type, a.granted, a.input]), [
          ["request_user_input", true, "jane@example.com"]
        ])
      }))

    it.effect("answer-requests.ts answers in the observed dialect", () =>
      Effect.gen(function*() {
        const { sims } = yield* ExampleRuns
        const { stdout } = yield* succeeded("answerObserved")
        const answers = yield* sims.observed.answers(sessionIdAfter(stdout, "Session"))
        assert.deepStrictEqual(answers.map((a) => [a.resource_type, a.granted, a.input]), [
          ["request_user_input", true, "jane@example.com"]
        ])
      }))

    it.effect("stream-pipeline.ts numbers the actions, batches the thoughts and logs every event", () =>
      Effect.gen(function*() {
        for (const name of ["pipeline", "pipelineObserved"] as const) {
          const { stdout } = yield* succeeded(name)
          assert.include(stdout, "action #1: ", name)
          assert.include(stdout, "action #3: ", name)
          assert.notInclude(stdout, "action #4: ", name)
          assert.match(stdout, /thoughts \(\d\): /, name)
          assert.include(stdout, "received Complete", name)
          assert.include(stdout, "Actions seen: 3, thoughts seen: 4", name)
          assert.match(stdout, /Outcome: Finished "Compare the three pricing plans"/, name)
        }
      }))

    it.effect("errors.ts tells each typed error apart", () =>
      Effect.gen(function*() {
        for (const name of ["errors", "errorsObserved"] as const) {
          const { stdout } = yield* succeeded(name)
          assert.include(stdout, "1. InvalidRequest (CreateSessionRequest, nothing sent): max_actions", name)
          assert.include(stdout, "2. Unauthorized (HTTP 401)", name)
          assert.include(stdout, "3. MissingCredentials (createSession, nothing sent): set AGENT_SESSION_API_KEY", name)
          assert.include(stdout, "4. NotFound (HTTP 404, AgentApi.getSession)", name)
          assert.include(stdout, "5. InsecureTransport: refused to send a key to http://agents.example.com", name)
        }
      }))

    it.effect("cluster.ts runs two sessions on the embedded cluster runner, answers from the log, prints the outcomes", () =>
      Effect.gen(function*() {
        const { sims } = yield* ExampleRuns
        const { stdout } = yield* succeeded("cluster")
        const ids = [...stdout.matchAll(/^Started (\S+): /gm)].map((m) => m[1] ?? "")
        assert.strictEqual(ids.length, 2, stdout)
        for (const id of ids) {
          assert.include(stdout, `${id} #1 Started`)
          assert.match(stdout, new RegExp(`^${id} #\\d+ ExternalResourceRequested$`, "m"))
          assert.match(stdout, new RegExp(`^Outcome of ${id}: [\\s\\S]*?\\(3/10 actions, cost 0.03, type \\w+, \\d+ events logged\\)$`, "m"))
          const answers = yield* sims.permission.answers(id)
          assert.deepStrictEqual(answers.map((a) => [a.resource_type, a.granted]), [["admin_permission_request", true]])
        }
        assert.notInclude(stdout, "WARN")
      }))

    it.effect("custom-schedules.ts retries HTTP and reconnects on its own schedules", () =>
      Effect.gen(function*() {
        const { stdout } = yield* succeeded("schedules")
        assert.include(stdout, "http retry after ServerError")
        // The simulator destroys the TCP socket: the client sees an abnormal close (1006).
        assert.match(stdout, /^reconnecting after: \S/m)
        assert.match(stdout, /^\(this run\) reconnecting after: \S/m)
        assert.match(stdout, /First run: Finished/)
        assert.match(stdout, /Second run: Finished/)
        assert.include(stdout, "Total cost: 0.06")
      }))

    it.effect("testing-your-app.ts books a table against the service", () =>
      Effect.gen(function*() {
        const { stdout } = yield* succeeded("app")
        assert.match(stdout, /Booked: .*\(3 actions, cost 0\.03\)/)
      }))

    it.effect("record-a-session.ts records bookTable's session, answer included, with no key in the file", () =>
      Effect.gen(function*() {
        const { sims } = yield* ExampleRuns
        const { stdout } = yield* succeeded("record")
        assert.match(stdout, /^Booked: /m)
        assert.include(stdout, `Recorded ${recordingPath}`)
        const text = readFileSync(recordingPath, "utf8")
        assert.notInclude(text, sims.input.accountKey)
        const types = text.trim().split("\n").map((line) => (JSON.parse(line) as { type: string }).type)
        assert.strictEqual(types[0], "header")
        assert.deepStrictEqual(types.slice(1, 3), ["create", "created"])
        assert.include(types, "answer")
        assert.strictEqual(types.at(-1), "end")
      }))

    it.effect("npm start shows a whole session, its outcome and its cost, in both dialects", () =>
      Effect.gen(function*() {
        for (const name of ["start", "startObserved"] as const) {
          const { stdout } = yield* succeeded(name)
          assert.include(stdout, name === "start" ? "(documented dialect)" : "(observed dialect)", name)
          assert.match(stdout, /^action 1\/6 /m, name)
          assert.include(stdout, "answering    approve", name)
          assert.match(stdout, /^Outcome: Finished "Find the opening hours"/m, name)
          assert.include(stdout, "Actions: 4/6", name)
          assert.include(stdout, "Total cost: 0.04", name)
        }
      }))
  })
})
