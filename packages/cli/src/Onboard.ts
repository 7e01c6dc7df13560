/**
 * `effect-agent-session onboard`: register an agent, print it and where to keep its key.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AgentSessions } from "effect-agent-session/AgentSessions"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as CliConfig from "./Config.js"
import * as Flags from "./Flags.js"
import { classify, CliExit, ExitCode, UsageError, withDialectHint } from "./ExitCode.js"
import * as Render from "./Render.js"
import * as Sanitize from "./Sanitize.js"

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
    Options.withDescription("Print the agent's key (it is returned once: --show-key or --save-key is required)")
  ),
  saveKey: Options.file("save-key").pipe(
    Options.withDescription("Write the agent's key to this new file (created with mode 0600 before the agent is registered)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the agent as one JSON object")),
  ...CliConfig.connectionOptions
}

/** Why a key file could not be created or written, in a few words. */
const reasonOf = (error: PlatformError.PlatformError): string => {
  if (error._tag === "SystemError") {
    switch (error.reason) {
      case "AlreadyExists":
        return "it exists (--save-key never overwrites a file)"
      case "NotFound":
        return "no such directory"
      case "PermissionDenied":
        return "permission denied"
      default:
        break
    }
  }
  return error.message
}

/**
 * Registers an agent and prints it. The service returns the agent's key only once, so the
 * command refuses to run unless the key has somewhere to go: `--save-key <file>` (created
 * exclusively, mode 0600, before the agent is registered: a file that cannot be created stops the
 * command before anything is sent) or `--show-key`. A key whose file could not be written after
 * all (a full disk) is printed instead, never dropped, and the command exits with
 * `ExitCode.keyNotSaved` (9).
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
} & CliConfig.ConnectionFlags, sink: Render.Sink = Render.processSink, statusNotes: boolean = process.stderr.isTTY === true): Effect.Effect<void, CliExit, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!flags.showKey && Option.isNone(flags.saveKey)) {
      return yield* new UsageError({
        message: "onboard needs --save-key <file> or --show-key: the service returns the agent's key only once"
      })
    }
    const connection = yield* CliConfig.resolve(flags)
    if (Option.isNone(connection.apiKey)) {
      return yield* new UsageError({
        message: `no API key: set ${CliConfig.Env.apiKey} (the account key) or pass --api-key`
      })
    }
    // The key's file, created (exclusively, mode 0600) before the agent exists.
    const keyFile = yield* Option.match(flags.saveKey, {
      onNone: () => Effect.succeedNone,
      onSome: (path) =>
        fs.open(path, { flag: "wx", mode: 0o600 }).pipe(
          Effect.map((file) => Option.some({ path, file })),
          Effect.mapError((e) => new UsageError({ message: `--save-key: cannot create ${path}: ${reasonOf(e)}` }))
        )
    })
    const removeKeyFile = Option.match(keyFile, {
      onNone: () => Effect.void,
      onSome: ({ path }) => Effect.ignore(fs.remove(path))
    })
    if (statusNotes) sink.err(`onboarding agent at ${connection.baseUrl}...\n`)
    const agent = yield* Effect.flatMap(AgentSessions, (sessions) =>
      sessions.onboard({ name: flags.name, website: flags.website, domain: flags.domain })).pipe(
        Effect.provide(NodeAgentSessions.layer(CliConfig.layerOptions(connection))),
        // Nothing was registered (as far as the service said): the empty file goes too.
        Effect.tapError(() => removeKeyFile),
        Effect.mapError((error) => ({ error, dialect: connection.dialect }))
      )
    const key = Option.map(agent.apiKey, Redacted.value)
    // Written to the file opened above; a failure keeps the key on screen instead (below).
    const saved: Option.Option<Either.Either<string, string>> = yield* Option.match(keyFile, {
      onNone: () => Effect.succeedNone,
      onSome: ({ file, path }) =>
        Option.match(key, {
          onNone: () => Effect.as(removeKeyFile, Option.none()),
          onSome: (value) =>
            Effect.zipRight(file.writeAll(new TextEncoder().encode(value + "\n")), file.sync).pipe(
              Effect.as(Option.some(Either.right(path))),
              Effect.catchAll((e) =>
                Effect.as(removeKeyFile, Option.some(Either.left(`${path}: ${reasonOf(e)}`)))
              )
            )
        })
    })
    const notSaved = Option.flatMap(saved, Either.getLeft)
    const savedTo = Option.flatMap(saved, Either.getRight)
    const showKey = flags.showKey || Option.isSome(notSaved)
    if (flags.json) {
      sink.out(Sanitize.json({
        agentId: agent.agentId,
        name: agent.name,
        website: agent.website,
        domain: agent.domain,
        hasKey: Option.isSome(key),
        ...(showKey ? { apiKey: Option.getOrNull(key) } : {}),
        ...(Option.isSome(savedTo) ? { keyFile: savedTo.value } : {}),
        ...(Option.isSome(notSaved) ? { keyNotSaved: notSaved.value } : {})
      }) + "\n")
    } else {
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
              showKey ? value : Option.isSome(savedTo) ? `written to ${savedTo.value} (mode 0600)` : "returned, not shown"
          })
        }`
      ]
      if (Option.isSome(notSaved)) {
        lines.push(
          "",
          `The key could not be written to ${notSaved.value}; it is printed above instead.`,
          "Copy it to a secret store now: the service returns it only once."
        )
      }
      if (Option.isSome(key)) {
        lines.push(
          "",
          "Keep the agent's key secret: the service returns it only once.",
          "Store it in a secret store (a password manager, your CI's secrets, a vault), never in source code.",
          `To run sessions as this agent, provide it as ${CliConfig.Env.agentKey} (or --agent-key);`,
          `it can also stand in for the account key in ${CliConfig.Env.apiKey} where the service accepts it.`
        )
      }
      sink.out(lines.join("\n") + "\n")
    }
    if (Option.isSome(notSaved)) {
      sink.err(`error: the agent was onboarded but its key could not be written to ${notSaved.value}; the key was printed\n`)
      return yield* new CliExit({ code: ExitCode.keyNotSaved })
    }
  }).pipe(
    Effect.scoped,
    Effect.catchAll((failure) =>
      Effect.gen(function*() {
        if (failure instanceof CliExit) return yield* failure
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
