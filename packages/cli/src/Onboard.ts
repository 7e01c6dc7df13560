/**
 * `effect-agent-session onboard`: register an agent, print it and where to keep its key.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AgentSessions } from "effect-agent-session/AgentSessions"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as CliConfig from "./Config.js"
import * as Flags from "./Flags.js"
import { classify, CliExit, UsageError, withDialectHint } from "./ExitCode.js"
import * as Render from "./Render.js"

/**
 * The flags of `onboard`.
 *
 * @since 0.1.0
 * @category models
 */
export const onboardOptions = {
  name: Flags.nonEmpty("name").pipe(Options.withDescription("A unique name for the agent")),
  website: Flags.url("website", ["http:", "https:"]).pipe(Options.withDescription("The primary website the agent works on")),
  domain: Flags.choice("domain", ["sales", "marketing", "research", "automation", "podcasting"]).pipe(
    Options.withDescription("The agent's purpose")
  ),
  showKey: Options.boolean("show-key").pipe(
    Options.withDescription("Print the agent's key (it is returned once; by default it is not shown)")
  ),
  saveKey: Options.file("save-key").pipe(
    Options.withDescription("Write the agent's key to this file (created with mode 0600, never overwritten)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the agent as one JSON object")),
  ...CliConfig.connectionOptions
}

/**
 * Registers an agent and prints it; the key is printed only with `--show-key`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const onboard = (flags: {
  readonly name: string
  readonly website: string
  readonly domain: "sales" | "marketing" | "research" | "automation" | "podcasting"
  readonly showKey: boolean
  readonly saveKey: Option.Option<string>
  readonly json: boolean
} & CliConfig.ConnectionFlags, sink: Render.Sink = Render.processSink): Effect.Effect<void, CliExit, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const connection = yield* CliConfig.resolve(flags)
    if (Option.isNone(connection.apiKey)) {
      return yield* new UsageError({
        message: `no API key: set ${CliConfig.Env.apiKey} (the account key) or pass --api-key`
      })
    }
    if (Option.isSome(flags.saveKey) && (yield* Effect.orElseSucceed(fs.exists(flags.saveKey.value), () => false))) {
      return yield* new UsageError({ message: `${flags.saveKey.value} exists: --save-key never overwrites a file` })
    }
    const agent = yield* Effect.flatMap(AgentSessions, (sessions) =>
      sessions.onboard({ name: flags.name, website: flags.website, domain: flags.domain })).pipe(
        Effect.provide(NodeAgentSessions.layer(CliConfig.layerOptions(connection))),
        Effect.mapError((error) => ({ error, dialect: connection.dialect }))
      )
    const key = Option.map(agent.apiKey, Redacted.value)
    let saved = false
    if (Option.isSome(flags.saveKey) && Option.isSome(key)) {
      yield* fs.writeFileString(flags.saveKey.value, key.value + "\n", { flag: "wx", mode: 0o600 }).pipe(
        Effect.mapError((e) => new UsageError({ message: `cannot write ${flags.saveKey.pipe(Option.getOrElse(() => ""))}: ${e.message}` }))
      )
      saved = true
    }
    if (flags.json) {
      sink.out(JSON.stringify({
        agentId: agent.agentId,
        name: agent.name,
        website: agent.website,
        domain: agent.domain,
        hasKey: Option.isSome(key),
        ...(flags.showKey ? { apiKey: Option.getOrNull(key) } : {}),
        ...(saved ? { keyFile: Option.getOrNull(flags.saveKey) } : {})
      }) + "\n")
      return
    }
    const lines = [
      `Agent onboarded`,
      `  id:      ${agent.agentId}`,
      `  name:    ${agent.name}`,
      `  website: ${agent.website}`,
      `  domain:  ${agent.domain}`,
      `  key:     ${
        Option.match(key, {
          onNone: () => "none returned (the account key will be used for its sessions)",
          onSome: (value) =>
            flags.showKey ? value : saved ? `written to ${Option.getOrElse(flags.saveKey, () => "")} (mode 0600)` : "returned, not shown"
        })
      }`
    ]
    if (Option.isSome(key)) {
      lines.push(
        "",
        "Keep the agent's key secret: the service returns it only once.",
        "Store it in a secret store (a password manager, your CI's secrets, a vault), never in source code.",
        `To run sessions as this agent, provide it as ${CliConfig.Env.agentKey} (or --agent-key);`,
        `it can also stand in for the account key in ${CliConfig.Env.apiKey} where the service accepts it.`
      )
      if (!flags.showKey && !saved) {
        lines.push(
          "The key was not printed and cannot be fetched again; this agent's sessions can still use the account key.",
          "Next time pass --save-key FILE (written with mode 0600) or --show-key."
        )
      }
    }
    sink.out(lines.join("\n") + "\n")
  }).pipe(
    Effect.catchAll((failure) =>
      Effect.gen(function*() {
        const error = "dialect" in failure ? failure.error : failure
        const classified = classify(error)
        const code = classified.code
        const message = "dialect" in failure
          ? withDialectHint(error, classified.message, failure.dialect)
          : classified.message
        sink.err(`error: ${message}\n`)
        return yield* new CliExit({ code })
      })
    )
  )

/**
 * The `onboard` command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("onboard", onboardOptions, (flags) => onboard(flags)).pipe(
  Command.withDescription("Register an agent with the service and print it")
)
