/**
 * Runs the simulator until interrupted: `tsx packages/simulator/src/main.ts [--port N] [--host H]
 * [--dialect documented|observed] [--account-key K]`. The environment gives the defaults:
 * `SIMULATOR_PORT` (else `PORT`, else 4010), `SIMULATOR_HOST`, `AGENT_SESSION_DIALECT`,
 * `SIMULATOR_ACCOUNT_KEY`. It logs the addresses and the account key (a test key of the
 * simulator's own: `sim-account-key` on loopback; listening beyond loopback without a key given,
 * a random one).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import * as Simulator from "./Simulator.js"

/** The value of `--name value` or `--name=value` on the command line. */
const flag = (name: string): Option.Option<string> => {
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg === `--${name}`) return Option.fromNullable(args[i + 1])
    if (arg.startsWith(`--${name}=`)) return Option.some(arg.slice(name.length + 3))
  }
  return Option.none()
}

const port = Option.match(flag("port"), {
  onNone: () =>
    Config.integer("SIMULATOR_PORT").pipe(Config.orElse(() => Config.integer("PORT")), Config.withDefault(4010)),
  onSome: (text) => Config.succeed(Number(text))
})

const options = Effect.gen(function*() {
  const portValue = yield* port
  const host = yield* Option.match(flag("host"), {
    onNone: () => Config.string("SIMULATOR_HOST").pipe(Config.withDefault("127.0.0.1")),
    onSome: Config.succeed
  })
  const dialectName = yield* Option.match(flag("dialect"), {
    onNone: () => Config.literal("documented", "observed")("AGENT_SESSION_DIALECT").pipe(Config.withDefault("documented" as const)),
    onSome: (text) => Config.succeed(text === "observed" ? "observed" as const : "documented" as const)
  })
  // Unset: the simulator's default (the well-known key on loopback, a random one beyond).
  const accountKey = yield* Option.match(flag("account-key"), {
    onNone: () => Config.option(Config.string("SIMULATOR_ACCOUNT_KEY")).pipe(Config.map(Option.getOrUndefined)),
    onSome: (key) => Config.succeed<string | undefined>(key)
  })
  if (!Number.isInteger(portValue) || portValue < 0 || portValue > 65535) {
    return yield* Effect.dieMessage(`not a port: ${portValue}`)
  }
  return { port: portValue, host, dialect: Dialect.fromName(dialectName), accountKey } satisfies Simulator.Options
})

const main = Effect.gen(function*() {
  const sim = yield* Simulator.make(yield* options)
  yield* Effect.log(`Simulator (${sim.dialect.name} dialect) listening`).pipe(
    Effect.annotateLogs({ baseUrl: sim.baseUrl, wsUrl: sim.wsUrl, accountKey: sim.accountKey })
  )
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(main)
