/**
 * `effect-agent-session simulate`: start the reference simulator on loopback, print its URLs
 * and account key, and run until interrupted.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import { Simulator } from "effect-agent-session-simulator"
import * as CliConfig from "./Config.js"
import * as Flags from "./Flags.js"
import { CliExit, ExitCode } from "./ExitCode.js"
import * as Render from "./Render.js"
import * as ServeReplay from "./ServeReplay.js"

/**
 * The flags of `simulate`.
 *
 * @since 0.1.0
 * @category models
 */
export const simulateOptions = {
  port: Flags.integer("port", { min: 0, max: 65535 }).pipe(
    Options.withDescription("The port to listen on; 0 picks a free one (printed)"),
    Options.withDefault(8787)
  ),
  host: Options.text("host").pipe(Options.withDescription("The address to listen on"), Options.withDefault("127.0.0.1")),
  dialect: Flags.choice("dialect", ["documented", "observed"]).pipe(
    Options.withDescription("The wire dialect the simulator speaks"),
    Options.withDefault("documented" as const)
  ),
  actions: Flags.integer("actions", { min: 0, max: 100_000 }).pipe(
    Options.withDescription("The actions the scripted agent wants to run (it runs at most max_actions)"),
    Options.withDefault(5)
  ),
  ask: Flags.choice("ask", ["none", "input", "permission"]).pipe(
    Options.withDescription("What the agent asks in the middle of its run"),
    Options.withDefault("permission" as const)
  ),
  frameDelay: Flags.integer("frame-delay", { min: 0, max: 3_600_000 }).pipe(
    Options.withDescription("Milliseconds before each event frame (slow it down to watch the live view)"),
    Options.withDefault(300)
  ),
  accountKey: Options.text("account-key").pipe(
    Options.withDescription(
      "The account key the simulator accepts (default: sim-account-key on loopback; beyond loopback a random key, printed)"
    ),
    Options.optional
  ),
  fault: Options.text("fault").pipe(
    Options.withDescription(
      "A fault, repeatable: drop-after=N[,M...], malformed-at=N, unknown-event-at=N, stall-after=N:MS, " +
        "oversize-at=N:BYTES, exceed-max-actions=N, close-before-complete, reject-handshake, replay-on-reconnect=N, " +
          "fail-503=N, rate-limit=N[:SECONDS], http-delay=MS"
    ),
    Options.repeated
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the addresses as one JSON object")),
  replay: Options.text("replay").pipe(
    Options.withDescription(
      "Serve this recorded session (run --record) instead of the scripted agent, in its recorded dialect, over WebSocket and SSE"
    ),
    Options.optional
  ),
  speed: Options.float("speed").pipe(
    Options.withDescription("With --replay: the recorded delays divided by this (10: ten times faster)"),
    Options.withDefault(1)
  )
}

const positive = (name: string, text: string): Either.Either<number, string> => {
  const n = Number(text)
  return Number.isInteger(n) && n >= 0 ? Either.right(n) : Either.left(`--fault ${name} needs a whole number, not ${JSON.stringify(text)}`)
}

/**
 * Parses `--fault` values into the simulator's faults.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseFaults = (specs: ReadonlyArray<string>): Either.Either<Simulator.Faults, string> => {
  const ws: { -readonly [K in keyof Simulator.WsFaults]: Simulator.WsFaults[K] } = {}
  const http: { -readonly [K in keyof Simulator.HttpFaults]: Simulator.HttpFaults[K] } = {}
  const dropAfter: Array<number> = []
  for (const spec of specs) {
    const [name = "", value = ""] = spec.split("=", 2)
    const number = (text: string) => positive(name, text)
    let result: Either.Either<void, string>
    switch (name.trim()) {
      case "drop-after":
        result = Either.map(
          Either.all(value.split(",").filter((s) => s.length > 0).map(number)),
          (ns) => void dropAfter.push(...ns)
        )
        break
      case "malformed-at":
        result = Either.map(number(value), (n) => void (ws.malformedAt = n))
        break
      case "unknown-event-at":
        result = Either.map(number(value), (n) => void (ws.unknownEventAt = n))
        break
      case "stall-after": {
        const [after = "", ms = ""] = value.split(":", 2)
        result = Either.map(
          Either.all([number(after), number(ms)]),
          ([n, d]) => void (ws.stall = { after: n, duration: Duration.millis(d) })
        )
        break
      }
      case "oversize-at": {
        const [at = "", bytes = ""] = value.split(":", 2)
        result = Either.map(Either.all([number(at), number(bytes)]), ([n, b]) => void (ws.oversize = { at: n, bytes: b }))
        break
      }
      case "replay-on-reconnect":
        result = Either.map(number(value), (n) => void (ws.replayOnReconnect = n))
        break
      case "exceed-max-actions":
        result = Either.map(number(value), (n) => void (ws.exceedMaxActions = n))
        break
      case "close-before-complete":
        ws.closeBeforeComplete = true
        result = Either.void
        break
      case "reject-handshake":
        ws.rejectHandshake = true
        result = Either.void
        break
      case "fail-503":
        result = Either.map(number(value), (n) => void (http.fail503 = n))
        break
      case "rate-limit": {
        const [count = "", retryAfter = "1"] = value.split(":", 2)
        result = Either.map(number(count), (n) => void (http.rateLimit = { count: n, retryAfter }))
        break
      }
      case "http-delay":
        result = Either.map(number(value), (n) => void (http.delay = Duration.millis(n)))
        break
      default:
        result = Either.left(`--fault: unknown fault ${JSON.stringify(spec)}`)
    }
    if (Either.isLeft(result)) return Either.left(result.left)
  }
  if (dropAfter.length > 0) ws.dropAfter = dropAfter
  return Either.right({ ws, http })
}

/**
 * Whether a listen address means every interface (`0.0.0.0`, `::`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isUnspecified = (host: string): boolean => {
  const h = host.trim().replace(/^\[|\]$/g, "")
  return h === "0.0.0.0" || h === "::" || h === "0:0:0:0:0:0:0:0"
}

/**
 * The loopback address of a simulator listening on every interface (`127.0.0.1`, or `[::1]`
 * for `::`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const loopbackUrl = (url: string, scheme: "http:" | "ws:", port: number, host: string): string => {
  const loopback = host.includes(":") ? "[::1]" : "127.0.0.1"
  const path = URL.canParse(url) ? new URL(url).pathname.replace(/^\/$/, "") : ""
  return `${scheme}//${loopback}:${port}${path}`
}

/**
 * Starts the simulator and waits until interrupted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const simulate = (flags: {
  readonly port: number
  readonly host: string
  readonly dialect: "documented" | "observed"
  readonly actions: number
  readonly ask: "none" | "input" | "permission"
  readonly frameDelay: number
  readonly accountKey: Option.Option<string>
  readonly fault: ReadonlyArray<string>
  readonly json: boolean
  readonly replay?: Option.Option<string> | undefined
  readonly speed?: number | undefined
}, sink: Render.Sink = Render.processSink): Effect.Effect<void, CliExit> =>
  Effect.gen(function*() {
    if (flags.replay !== undefined && Option.isSome(flags.replay)) {
      return yield* ServeReplay.serve({ ...flags, path: flags.replay.value, speed: flags.speed ?? 1 }, sink)
    }
    const faults = parseFaults(flags.fault)
    if (Either.isLeft(faults)) {
      sink.err(`error: ${faults.left}\n`)
      return yield* new CliExit({ code: ExitCode.usage })
    }
    const simulator = yield* Simulator.make({
      port: flags.port,
      host: flags.host,
      dialect: Dialect.fromName(flags.dialect),
      ...(Option.isSome(flags.accountKey) ? { accountKey: flags.accountKey.value } : {}),
      scenario: { actions: flags.actions, ask: flags.ask, frameDelay: Duration.millis(flags.frameDelay) },
      faults: faults.right
    }).pipe(
      Effect.catchAll((error) =>
        Effect.gen(function*() {
          sink.err(`error: cannot listen on ${flags.host}:${flags.port}: ${String(error.cause)}\n`)
          return yield* new CliExit({ code: ExitCode.usage })
        })
      )
    )
    // Listening on every interface (0.0.0.0, ::): print loopback addresses, which the SDK accepts
    // over plain http:// (it refuses 0.0.0.0, which is not loopback) and which work on this machine.
    const everywhere = isUnspecified(flags.host)
    // Reachable from other machines: a random account key unless one was given (Simulator.make).
    const generated = Option.isNone(flags.accountKey) && !Simulator.isLoopback(flags.host)
    const baseUrl = everywhere ? loopbackUrl(simulator.baseUrl, "http:", simulator.port, flags.host) : simulator.baseUrl
    const wsUrl = everywhere ? loopbackUrl(simulator.wsUrl, "ws:", simulator.port, flags.host) : simulator.wsUrl
    if (flags.json) {
      sink.out(JSON.stringify({
        baseUrl,
        wsUrl,
        port: simulator.port,
        accountKey: simulator.accountKey,
        dialect: flags.dialect
      }) + "\n")
    } else {
      const faultText = flags.fault.length === 0 ? "none" : flags.fault.join(" ")
      sink.out([
        `Simulator listening (${flags.dialect} dialect)`,
        `  base URL:    ${baseUrl}`,
        `  WS URL:      ${wsUrl}`,
        ...(everywhere ? [`  listening:   on every interface (${flags.host}); from another machine use this machine's address`] : []),
        `  account key: ${simulator.accountKey}${
          generated ? " (generated: beyond loopback the well-known key is refused; --account-key sets one)" : ""
        }`,
        `  scenario:    ${flags.actions} actions, asks ${flags.ask}, ${flags.frameDelay} ms between frames`,
        `  faults:      ${faultText}`,
        "",
        "In another terminal:",
        `  export ${CliConfig.Env.baseUrl}=${baseUrl}`,
        `  export ${CliConfig.Env.apiKey}=${simulator.accountKey}`,
        ...(flags.dialect === "observed" ? [`  export ${CliConfig.Env.dialect}=observed`] : []),
        `  npx effect-agent-session run --goal "Find the pricing page" --start-url https://example.com --max-actions 5`,
        "",
        "Press Ctrl-C to stop."
      ].join("\n") + "\n")
    }
    return yield* Effect.never
  }).pipe(Effect.scoped)

/**
 * The `simulate` command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("simulate", simulateOptions, (flags) => simulate(flags)).pipe(
  Command.withDescription("Start the reference simulator of the service on loopback")
)
