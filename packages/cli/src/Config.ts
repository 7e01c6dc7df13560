/**
 * The connection options shared by `run` and `onboard`: each from its flag, else from the
 * environment variable `NodeAgentSessions.layerConfig` reads.
 *
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Dialect from "effect-agent-session/Dialect"
import type * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import { UsageError } from "./ExitCode.js"
import * as Flags from "./Flags.js"

/**
 * The environment variables the command line reads.
 *
 * @since 0.1.0
 * @category models
 */
export const Env = {
  apiKey: "AGENT_SESSION_API_KEY",
  agentKey: "AGENT_SESSION_AGENT_KEY",
  baseUrl: "AGENT_SESSION_BASE_URL",
  wsUrl: "AGENT_SESSION_WS_URL",
  dialect: "AGENT_SESSION_DIALECT",
  transport: "AGENT_SESSION_TRANSPORT"
} as const

/**
 * The flags of the connection.
 *
 * @since 0.1.0
 * @category models
 */
export const connectionOptions = {
  baseUrl: Options.text("base-url").pipe(
    Options.withDescription(`The service's HTTP base URL (default: $${Env.baseUrl})`),
    Options.optional
  ),
  wsUrl: Options.text("ws-url").pipe(
    Options.withDescription(
      `The service's WebSocket base URL (default: $${Env.wsUrl}, else the base URL with ws:// or wss://; not used with --transport sse)`
    ),
    Options.optional
  ),
  transport: Flags.choice("transport", ["websocket", "sse"]).pipe(
    Options.withDescription(
      `The event channel: websocket, or sse (the observed client's Server-Sent Events at the base URL) (default: $${Env.transport}, else websocket)`
    ),
    Options.optional
  ),
  apiKey: Options.redacted("api-key").pipe(
    Options.withDescription(`The account API key (default: $${Env.apiKey}; prefer the variable: flags show in ps)`),
    Options.optional
  ),
  dialect: Flags.choice("dialect", ["documented", "observed"]).pipe(
    Options.withDescription(`The wire dialect (default: $${Env.dialect}, else documented)`),
    Options.optional
  ),
  allowInsecure: Options.boolean("allow-insecure").pipe(
    Options.withDescription("Allow plain http:// and ws:// to a host that is not loopback (the key travels in clear)")
  )
}

/**
 * The parsed connection flags.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionFlags {
  readonly baseUrl: Option.Option<string>
  readonly wsUrl: Option.Option<string>
  readonly transport: Option.Option<"websocket" | "sse">
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly dialect: Option.Option<"documented" | "observed">
  readonly allowInsecure: boolean
}

/**
 * The resolved connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly baseUrl: string
  /** Absent with the `sse` transport. */
  readonly wsUrl: Option.Option<string>
  readonly transport: "websocket" | "sse"
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly dialect: "documented" | "observed"
  readonly allowInsecure: boolean
}

const envString = (name: string): Effect.Effect<Option.Option<string>> =>
  Effect.orElseSucceed(
    Effect.map(Config.option(Config.string(name)), Option.filter((s) => s.trim().length > 0)),
    () => Option.none()
  )

/**
 * A flag, else its environment variable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const flagOrEnv = (flag: Option.Option<string>, name: string): Effect.Effect<Option.Option<string>> =>
  Option.isSome(flag) ? Effect.succeed(flag) : envString(name)

/**
 * A secret flag, else its environment variable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const secretOrEnv = (
  flag: Option.Option<Redacted.Redacted<string>>,
  name: string
): Effect.Effect<Option.Option<Redacted.Redacted<string>>> =>
  Option.isSome(flag)
    ? Effect.succeed(Option.filter(flag, (key) => Redacted.value(key).trim().length > 0))
    : Effect.map(envString(name), Option.map(Redacted.make))

const required = (flag: Option.Option<string>, name: string, option: string) =>
  Effect.flatMap(flagOrEnv(flag, name), (value) =>
    Option.match(value, {
      onNone: () => Effect.fail(new UsageError({ message: `no ${option.replace("--", "")}: set ${name} or pass ${option}` })),
      onSome: Effect.succeed
    }))

/**
 * Checks that a URL from a flag (else its variable) is absolute with one of the schemes; the
 * message names the flag or the variable it came from.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkUrl = (
  value: string,
  source: string,
  schemes: ReadonlyArray<string>
): Effect.Effect<string, UsageError> =>
  Either.match(Flags.parseUrl(source, value, schemes), {
    onLeft: (message) => Effect.fail(new UsageError({ message })),
    onRight: Effect.succeed
  })

/**
 * Resolves the connection from flags and the environment. The base URL is required (the
 * WebSocket URL defaults from it); the key is checked by the SDK where an operation needs it (`MissingCredentials`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (flags: ConnectionFlags): Effect.Effect<Connection, UsageError> =>
  Effect.gen(function*() {
    const baseUrl = yield* Effect.flatMap(
      required(flags.baseUrl, Env.baseUrl, "--base-url"),
      (url) => checkUrl(url, Option.isSome(flags.baseUrl) ? "--base-url" : Env.baseUrl, ["http:", "https:"])
    )
    const transportText = yield* flagOrEnv(flags.transport, Env.transport)
    const transport = yield* Option.match(transportText, {
      onNone: () => Effect.succeed<"websocket" | "sse">("websocket"),
      onSome: (name) =>
        name === "websocket" || name === "sse"
          ? Effect.succeed<"websocket" | "sse">(name)
          : Effect.fail(new UsageError({ message: `${Env.transport} must be websocket or sse, not "${name}"` }))
    })
    // Without --ws-url or its variable, the SDK derives it from the base URL (http -> ws, https -> wss).
    const wsUrl = yield* Effect.flatMap(flagOrEnv(flags.wsUrl, Env.wsUrl), (url) =>
      Option.isNone(url) || transport === "sse"
        ? Effect.succeed(url)
        : Effect.asSome(checkUrl(url.value, Option.isSome(flags.wsUrl) ? "--ws-url" : Env.wsUrl, ["ws:", "wss:"])))
    const apiKey = yield* secretOrEnv(flags.apiKey, Env.apiKey)
    const dialectText = yield* flagOrEnv(flags.dialect, Env.dialect)
    const dialect = yield* Option.match(dialectText, {
      onNone: () => Effect.succeed<"documented" | "observed">("documented"),
      onSome: (name) =>
        name === "documented" || name === "observed"
          ? Effect.succeed<"documented" | "observed">(name)
          : Effect.fail(new UsageError({ message: `${Env.dialect} must be documented or observed, not "${name}"` }))
    })
    return { baseUrl, wsUrl, transport, apiKey, dialect, allowInsecure: flags.allowInsecure }
  })

/**
 * The options of `NodeAgentSessions.layer` for a resolved connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const layerOptions = (
  connection: Connection,
  extra: Partial<NodeAgentSessions.Options> = {}
): NodeAgentSessions.Options => ({
  ...extra,
  baseUrl: connection.baseUrl,
  ...(Option.isSome(connection.wsUrl) ? { wsUrl: connection.wsUrl.value } : {}),
  transport: connection.transport,
  dialect: Dialect.fromName(connection.dialect),
  allowInsecure: connection.allowInsecure,
  ...(Option.isSome(connection.apiKey) ? { apiKey: connection.apiKey.value } : {})
})
