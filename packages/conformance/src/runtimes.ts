/**
 * The end-to-end tier on other runtimes, written once for both editions: the runtimes (Bun, Deno as
 * it starts, Deno with `--unstable-net`, Node 22), the command that runs an edition's scenario
 * program on each (`runtimeCommand`), the scenarios (`runtimeScenarios`, plain data over the
 * simulators' addresses), the child process that runs them and reads its facts
 * (`runRuntimeScenarios`), and the judge of what it reported (`runtimeVerdict`). The scenario
 * program (`test/shared/scenarios.ts` of the Effect 3 edition, written once for both editions: each
 * runs its copy, which reaches its own API) and the runner that binds these to Effect
 * (`test/shared/runtimes.ts`) lie beside the editions' tests; each edition starts the simulators.
 */
import * as ChildProcess from "node:child_process"

/**
 * The runtimes: Bun, Deno as it starts (a standard `WebSocket`, which cannot pause), Deno with
 * `--unstable-net` (its `WebSocketStream`, read only while the consumer wants more), Node 22.
 */
export type RuntimeName = "bun" | "deno" | "deno --unstable-net" | "node"

/** Every runtime, in the order the tier runs them. */
export const runtimeNames: ReadonlyArray<RuntimeName> = ["bun", "deno", "deno --unstable-net", "node"]

/** A simulator's addresses (what `simulate --json` prints). */
export interface RuntimeTarget {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
  readonly dialect: "documented" | "observed"
}

/** One scenario of an edition's scenario program. */
export type RuntimeScenario =
  | {
    /** `AgentSessions.run` to the end, every request granted with `jane@example.com`. */
    readonly kind: "run"
    readonly name: string
    readonly target: RuntimeTarget
    readonly transport: "websocket" | "sse"
  }
  | {
    /** One event taken, then nothing until the connection is closed; then the rest drained. */
    readonly kind: "slow"
    readonly name: string
    readonly target: RuntimeTarget
    readonly transport: "websocket" | "sse"
    readonly bufferSize: number
  }
  | {
    /**
     * A consumer slower than the socket (a pause per event) over the WebSocket engine, whose
     * internals report the most events that waited and whether the runtime's socket can pause.
     */
    readonly kind: "paced"
    readonly name: string
    readonly target: RuntimeTarget
    readonly bufferSize: number
    readonly pauseMillis: number
    readonly maxActions: number
  }
  | {
    /** One `createSession` (a paid call) against a server that acts and then fails its answer. */
    readonly kind: "create"
    readonly name: string
    readonly baseUrl: string
    readonly key: string
  }

/** What a scenario program reports of one scenario (one JSON line each). */
export interface RuntimeFacts {
  readonly name: string
  readonly runtime: string
  /** The tags of the events received (keep-alives aside), in order. */
  readonly tags?: ReadonlyArray<string>
  /** The numbers of the `action_run` events received, in order (`(action i of n)`). */
  readonly actions?: ReadonlyArray<number>
  /** The inputs the service echoed in `external_resource_granted`. */
  readonly granted?: ReadonlyArray<string | undefined>
  /** How many requests `onRequest` answered. */
  readonly asked?: number
  /** The tag of the error the scenario ended with, if any, and its fields of interest. */
  readonly failure?: string | undefined
  readonly limit?: number | undefined
  readonly mayStillBeRunning?: boolean | undefined
  /** The most events that waited for the consumer (`paced`). */
  readonly peakBuffered?: number
  /** Whether the layer's sockets have `pause()`/`resume()` (`paced`). */
  readonly pausable?: boolean
  /** Whether they are `WebSocketStream`s read only while the consumer wants more (`paced`). */
  readonly streams?: boolean
  /** How many events the slow consumer's one pull took (`slow`). */
  readonly firstChunk?: number
  /** The connection's state when the slow consumer looked (`slow`). */
  readonly closedReason?: string | undefined
}

/** The slow consumer's buffer: small, so that a socket outruns it at once. */
export const SLOW_BUFFER = 4

/** The actions of the fast simulator's session (the paced consumer's). */
export const PACED_ACTIONS = 400

/**
 * The simulators every runtime talks to, as each runner starts them (port 0, on Node):
 * - `documented`, `observed`: that dialect, 5 actions, the agent asks for an input, a frame every
 *   2 ms, the WebSocket dropped after the 2nd and 5th frames (`--fault drop-after=2,5`);
 * - `fast`: {@link PACED_ACTIONS} actions, no request, no delay (the socket outruns a slow consumer);
 * - `paid`: 5 actions, a frame every 1 ms, the first create answered 503 twice, the agent running
 *   2 actions over its budget (`--fault fail-503=2 --fault exceed-max-actions=2`).
 */
export interface RuntimeSimulators {
  readonly documented: RuntimeTarget
  readonly observed: RuntimeTarget
  readonly fast: RuntimeTarget
  readonly paid: RuntimeTarget
}

/** The scenarios of one runtime's run: the simulators', and a create to `actingUrl` (an acting server that resets). */
export const runtimeScenarios = (sims: RuntimeSimulators, actingUrl: string): ReadonlyArray<RuntimeScenario> => [
  ...(["documented", "observed"] as const).flatMap((dialect) =>
    (["websocket", "sse"] as const).map((transport): RuntimeScenario => ({
      kind: "run",
      name: `run ${transport} ${dialect}`,
      target: sims[dialect],
      transport
    }))
  ),
  { kind: "slow", name: "slow", target: sims.fast, transport: "websocket", bufferSize: SLOW_BUFFER },
  { kind: "paced", name: "paced", target: sims.fast, bufferSize: SLOW_BUFFER, pauseMillis: 2, maxActions: PACED_ACTIONS },
  { kind: "run", name: "paid", target: sims.paid, transport: "websocket" },
  { kind: "create", name: "create lost after acting", baseUrl: actingUrl, key: "sk-runtime-key" }
]

/** Where the runtimes come from: the repository's scripts (`packages/effect4/scripts`), and the Node 22 to use. */
export interface RuntimeTools {
  /** `runtimes.mjs`: prints the path of a pinned runtime, installing it on first use. */
  readonly runtimesScript: string
  /** The Node 22 binary, or why there is none. */
  readonly node: { readonly path: string } | { readonly error: string }
}

/** The command of a runtime running `script` (an edition's scenario program) from the sources, or why it cannot. */
export const runtimeCommand = (runtime: RuntimeName, script: string, tools: RuntimeTools): ReadonlyArray<string> | string => {
  const condition = "--conditions=effect-agent-session-source"
  if (runtime === "node") return "path" in tools.node ? [tools.node.path, condition, "--import", "tsx", script] : tools.node.error
  const streams = runtime === "deno --unstable-net"
  const printed = ChildProcess.spawnSync(process.execPath, [tools.runtimesScript, "--print", streams ? "deno" : runtime], {
    encoding: "utf8"
  })
  if (printed.status !== 0) return printed.stderr.trim()
  const binary = printed.stdout.trim()
  return runtime === "bun"
    ? [binary, condition, script]
    : [binary, "run", "--allow-all", "--sloppy-imports", "--no-lock", ...(streams ? ["--unstable-net"] : []), condition, script]
}

/** The version a pinned runtime's package installs (`runtimes.mjs --version`), or `undefined` when none is pinned for this platform. */
export const pinnedVersion = (runtimesScript: string, runtime: "bun" | "deno"): string | undefined => {
  const printed = ChildProcess.spawnSync(process.execPath, [runtimesScript, "--version", runtime], { encoding: "utf8" })
  return printed.status === 3 ? undefined : printed.stdout.trim()
}

/** The environment of a scenario program: none of this machine's AGENT_SESSION_*, npm_* or VITEST* variables. */
const cleanEnv = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !name.startsWith("AGENT_SESSION_") && !name.startsWith("npm_") && name !== "NODE_OPTIONS" &&
      !name.startsWith("VITEST")
    )
  ),
  NO_COLOR: "1",
  DENO_NO_UPDATE_CHECK: "1"
})

/**
 * Runs the scenarios with `command` in `cwd` (within 180 s): `done` gets the facts of each scenario
 * by name, or what went wrong (the program failed, or reported fewer scenarios). Returns what
 * stops the program.
 */
export const runRuntimeScenarios = (
  command: ReadonlyArray<string>,
  scenarios: ReadonlyArray<RuntimeScenario>,
  cwd: string,
  done: (result: Map<string, RuntimeFacts> | Error) => void
): () => void => {
  const [binary = "", ...args] = command
  const child = ChildProcess.execFile(
    binary,
    [...args, JSON.stringify(scenarios)],
    { cwd, env: cleanEnv(), timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
    (error, stdout, stderr) => {
      const facts = new Map<string, RuntimeFacts>()
      for (const line of stdout.split("\n")) {
        if (!line.startsWith("{")) continue
        try {
          const parsed = JSON.parse(line) as RuntimeFacts
          facts.set(parsed.name, parsed)
        } catch {
          // A line that is not JSON is the program's own output.
        }
      }
      done(
        error !== null || facts.size !== scenarios.length
          ? new Error(`${command.join(" ")} (${String(error?.code ?? "ok")}):\n${stdout}\n${stderr}`)
          : facts
      )
    }
  )
  return () => {
    child.kill("SIGKILL")
  }
}

const upTo = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i + 1)

const same = (a: ReadonlyArray<unknown> | undefined, b: ReadonlyArray<unknown>): boolean =>
  a !== undefined && a.length === b.length && a.every((value, i) => value === b[i])

/**
 * What of the tier's expectations did not hold on `runtime` (empty when all did), given every
 * scenario's facts and how many sessions the acting server created:
 * - each `run` in both dialects over both transports: a whole session once, in order (`Started`
 *   first, `Complete` last, actions 1..5), the one request answered and echoed; over SSE on Bun,
 *   whose `fetch` drops what it had received when the connection is reset, the events at the
 *   simulator's drops may be missing, but none twice or out of order;
 * - a slow consumer: never more than 2 x bufferSize waiting; on a socket that cannot pause the
 *   events stop with `BufferOverflow` (limit 2 x bufferSize, the session may still run) after a
 *   prefix in order; on Deno with `--unstable-net` every event, no overflow, at most bufferSize
 *   waiting; Bun's and Deno's `WebSocketStream` pause, Deno's and Node's standard sockets do not;
 * - the paid calls: `ActionBudgetExceeded`; a create lost after acting `OutcomeUnknown`, one session.
 */
export const runtimeVerdict = (
  runtime: RuntimeName,
  all: ReadonlyMap<string, RuntimeFacts>,
  created: number
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const facts = (name: string): RuntimeFacts => all.get(name) ?? { name, runtime: "" }
  for (const name of all.keys()) {
    if (all.get(name)?.runtime.split(" ")[0] !== runtime.split(" ")[0]) problems.push(`${name}: ran on ${all.get(name)?.runtime}, not ${runtime}`)
  }
  for (const dialect of ["documented", "observed"]) {
    for (const transport of ["websocket", "sse"]) {
      const got = facts(`run ${transport} ${dialect}`)
      if (got.failure !== undefined) problems.push(`${got.name}: failed ${got.failure}`)
      if (got.tags?.at(-1) !== "Complete") problems.push(`${got.name}: the last event is ${String(got.tags?.at(-1))}, not Complete`)
      if (got.asked !== 1) problems.push(`${got.name}: ${String(got.asked)} requests answered, not 1`)
      if (!same(got.granted, ["jane@example.com"])) problems.push(`${got.name}: echoed ${JSON.stringify(got.granted)}`)
      if (runtime === "bun" && transport === "sse") {
        // Bun's `fetch` discards the body bytes it received but had not handed over yet when the
        // connection is reset (its stream errors, and an errored stream drops its queue): the
        // events in flight at each of the simulator's two abrupt drops may be lost in transit, as
        // over a network that resets. What holds: nothing twice, nothing out of order.
        const actions = got.actions ?? []
        if (!actions.every((n, i) => n >= 1 && n <= 5 && (i === 0 || n > (actions[i - 1] ?? 0)))) {
          problems.push(`${got.name}: actions ${JSON.stringify(got.actions)}, not in order once each`)
        }
        continue
      }
      if (got.tags?.[0] !== "Started") problems.push(`${got.name}: the first event is ${String(got.tags?.[0])}, not Started`)
      if (!same(got.actions, upTo(5))) problems.push(`${got.name}: actions ${JSON.stringify(got.actions)}, not 1..5 once in order`)
    }
  }
  const slow = facts("slow")
  const paced = facts("paced")
  if (slow.pausable !== paced.pausable) problems.push("slow and paced disagree on whether the socket pauses")
  for (const got of [paced, ...(slow.pausable === true ? [] : [slow])]) {
    if (got.failure === undefined) {
      if (!same(got.actions, upTo(PACED_ACTIONS))) problems.push(`${got.name}: not every action once, in order`)
    } else {
      if (got.failure !== "BufferOverflow") problems.push(`${got.name}: failed ${got.failure}, not BufferOverflow`)
      if (got.limit !== 2 * SLOW_BUFFER) problems.push(`${got.name}: limit ${String(got.limit)}, not ${2 * SLOW_BUFFER}`)
      if (got.mayStillBeRunning !== true) problems.push(`${got.name}: mayStillBeRunning is not true`)
      if (!same(got.actions, upTo(got.actions?.length ?? 0))) problems.push(`${got.name}: the actions before the overflow are not a prefix in order`)
    }
  }
  if ((paced.peakBuffered ?? Infinity) > 2 * SLOW_BUFFER) problems.push(`paced: ${String(paced.peakBuffered)} events waited, over ${2 * SLOW_BUFFER}`)
  // Bun's WebSocket has pause()/resume() (its pause lets frames already read through: the bound
  // holds there too); Deno's and Node's have not. Deno's WebSocketStream (with --unstable-net) is
  // read only while the consumer wants more: every event arrives, no overflow, no more than
  // bufferSize ever wait.
  if (paced.pausable !== (runtime === "bun" || runtime === "deno --unstable-net")) problems.push(`paced: pausable is ${String(paced.pausable)}`)
  if (paced.streams !== (runtime === "deno --unstable-net")) problems.push(`paced: streams is ${String(paced.streams)}`)
  if (runtime === "deno --unstable-net") {
    if (paced.failure !== undefined) problems.push(`paced: failed ${paced.failure} over a WebSocketStream`)
    if ((paced.peakBuffered ?? Infinity) > SLOW_BUFFER) problems.push(`paced: ${String(paced.peakBuffered)} waited over a WebSocketStream, over ${SLOW_BUFFER}`)
  }
  if (slow.pausable !== true) {
    // One pull taken, then nothing: the bound is reached for sure, the connection closed; what the
    // pull took, and at most 2 x bufferSize more, were delivered.
    if (slow.failure !== "BufferOverflow") problems.push(`slow: failed ${String(slow.failure)}, not BufferOverflow`)
    if (slow.closedReason !== "failed") problems.push(`slow: closed ${String(slow.closedReason)}, not failed`)
    if (slow.tags?.[0] !== "Started") problems.push(`slow: the first event is ${String(slow.tags?.[0])}`)
    if ((slow.firstChunk ?? 0) < 1) problems.push("slow: the first pull took nothing")
    if ((slow.tags?.length ?? Infinity) > (slow.firstChunk ?? 0) + 2 * SLOW_BUFFER) {
      problems.push(`slow: ${String(slow.tags?.length)} events delivered, over the first pull and 2 x bufferSize`)
    }
  }
  if (facts("paid").failure !== "ActionBudgetExceeded") problems.push(`paid: failed ${String(facts("paid").failure)}, not ActionBudgetExceeded`)
  if (facts("create lost after acting").failure !== "OutcomeUnknown") {
    problems.push(`create lost after acting: failed ${String(facts("create lost after acting").failure)}, not OutcomeUnknown`)
  }
  if (created !== 1) problems.push(`the acting server created ${created}: a create was sent again`)
  return problems
}
