/**
 * The keys the SDK authenticates with, and which key each operation uses.
 *
 * The declarations of the public module `Credentials`, written once for both editions:
 * each edition's `src/Credentials.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Keys } from "effect-agent-session-core"
import type { Agent } from "../src/Agent.js"
import { type CredentialsError, MissingAgentKey, MissingCredentials } from "../src/Errors.js"
import { configRedacted, ServiceTag } from "../src/internal/line.js"

/**
 * The operations that need a key.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation = Keys.Operation

/**
 * The environment variable of the account key.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_API_KEY: typeof Keys.ENV_API_KEY = Keys.ENV_API_KEY

/**
 * An agent whose key an operation should use: an onboarded {@link Agent}, or its id and key.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentKeyRef {
  readonly agentId: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
}

/**
 * Which key an operation uses:
 * - `"agent-or-account"` (default): onboard uses the account key; create session, get session and
 *   connect use the agent's key when an agent is given, else the account key.
 * - `"account"`: the account key for everything.
 * - `"agent"`: create session, get session and connect require an agent's key (`MissingAgentKey`
 *   without one).
 *
 * @since 0.1.0
 * @category models
 */
export type KeySelection = Keys.KeySelection

/**
 * The operations of the credentials service: the key for an operation, remembering an agent's
 * key, and the secrets to scrub from text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The key for an operation, for an optional agent. Fails before any request is sent when no
   * key is available: `onboard` always uses the account key (`MissingCredentials`); the
   * other operations may use an agent's key (`MissingAgentKey`).
   */
  readonly keyFor: {
    (operation: "onboard"): Effect.Effect<Redacted.Redacted<string>, MissingCredentials>
    (
      operation: Operation,
      agent?: AgentKeyRef | string | undefined
    ): Effect.Effect<Redacted.Redacted<string>, CredentialsError>
  }
  /** Remembers an onboarded agent's key, so later operations can name the agent by id. */
  readonly remember: (agent: AgentKeyRef) => Effect.Effect<void>
  /** Every secret value known, for scrubbing text (errors, logs) that might contain one. */
  readonly secrets: Effect.Effect<ReadonlyArray<string>>
}

/**
 * The credentials service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Credentials extends ServiceTag<Credentials, Service>()("effect-agent-session/Credentials") {}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The account key: a value, or an Effect read afresh for every request and reconnect. */
  readonly apiKey?:
    | Redacted.Redacted<string>
    | string
    | Effect.Effect<Option.Option<Redacted.Redacted<string>>>
    | undefined
  /** Agents whose keys are known in advance. */
  readonly agents?: Iterable<AgentKeyRef> | undefined
  /** Which key each operation uses (default `"agent-or-account"`). */
  readonly selection?: KeySelection | undefined
}

const normalizeKey = (
  apiKey: Options["apiKey"]
): Effect.Effect<Option.Option<Redacted.Redacted<string>>> => {
  if (apiKey === undefined) return Effect.succeedNone
  if (typeof apiKey === "string") return Effect.succeed(nonEmpty(Redacted.make(apiKey)))
  if (Redacted.isRedacted(apiKey)) return Effect.succeed(nonEmpty(apiKey))
  return Effect.map(apiKey, Option.flatMap(nonEmpty))
}

const nonEmpty = (key: Redacted.Redacted<string>): Option.Option<Redacted.Redacted<string>> =>
  Keys.isUsable(Redacted.value(key)) ? Option.some(key) : Option.none()

/** An agent's key as the core's key ring holds it. */
const agentKey = (agent: AgentKeyRef): Keys.AgentKey<Redacted.Redacted<string>> => ({
  agentId: agent.agentId,
  apiKey: Option.getOrUndefined(agent.apiKey)
})

/**
 * Builds the credentials service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service> =>
  Effect.sync(() => {
    const accountKey = normalizeKey(options.apiKey)
    const selection = options.selection ?? Keys.defaultSelection
    const ring = new Keys.Ring(Array.from(options.agents ?? [], agentKey), Redacted.value)

    const account = (operation: Operation) =>
      Effect.flatMap(accountKey, (key) =>
        Option.match(key, {
          onNone: () => Effect.fail(new MissingCredentials({ operation, variable: ENV_API_KEY })),
          onSome: Effect.succeed
        }))

    function keyFor(operation: "onboard"): Effect.Effect<Redacted.Redacted<string>, MissingCredentials>
    function keyFor(
      operation: Operation,
      agent?: AgentKeyRef | string
    ): Effect.Effect<Redacted.Redacted<string>, CredentialsError>
    function keyFor(
      operation: Operation,
      agent?: AgentKeyRef | string
    ): Effect.Effect<Redacted.Redacted<string>, CredentialsError> {
      return Effect.suspend((): Effect.Effect<Redacted.Redacted<string>, CredentialsError> => {
        const selected = ring.select(operation, selection, typeof agent === "object" ? agentKey(agent) : agent)
        switch (selected._tag) {
          case "Account":
            return account(operation)
          case "Agent":
            return Effect.succeed(selected.key)
          case "MissingAgentKey":
            return Effect.fail(new MissingAgentKey({ agentId: selected.agentId }))
        }
      })
    }

    const remember: Service["remember"] = (agent) => Effect.sync(() => ring.remember(agentKey(agent)))

    const secrets = Effect.map(accountKey, (key) => ring.secrets(Option.getOrUndefined(key)))

    return Credentials.of({ keyFor, remember, secrets })
  })

/**
 * Credentials from values.
 *
 * @example
 * ```ts
 * import { Credentials } from "effect-agent-session"
 * import * as Redacted from "effect/Redacted"
 *
 * const CredentialsLive = Credentials.layer({ apiKey: Redacted.make("sk-...") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Credentials> => Layer.effect(Credentials, make(options))

/**
 * Credentials from the environment: `AGENT_SESSION_API_KEY`, read as a redacted `Config` afresh
 * for every request and reconnect. A missing variable is `MissingCredentials` when an operation
 * needs the key, not when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<Options, "apiKey"> & { readonly apiKey?: Config.Config<Redacted.Redacted<string>> } = {}
): Layer.Layer<Credentials> =>
  layer({
    ...options,
    apiKey: Effect.orElseSucceed(
      Effect.map(options.apiKey ?? configRedacted(ENV_API_KEY), Option.some),
      () => Option.none()
    )
  })

/**
 * The key of an onboarded agent, as an {@link AgentKeyRef}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromAgent = (agent: Agent): AgentKeyRef => ({ agentId: agent.agentId, apiKey: agent.apiKey })
