/**
 * Which key each operation authenticates with, what a usable key is, and where the
 * account key is read from. Each edition holds the keys in its own secret type and fails with its
 * own errors (`MissingCredentials`, `MissingAgentKey`) where this module says a key is missing.
 *
 * @since 0.1.0
 */

/**
 * The operations that need a key.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation = "onboard" | "createSession" | "getSession" | "connect"

/**
 * The environment variable of the account key.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_API_KEY = "AGENT_SESSION_API_KEY"

/**
 * Which key an operation uses:
 * - `"agent-or-account"` (default): onboard uses the account key; create session, get session and
 *   connect use the agent's key when an agent is given, else the account key.
 * - `"account"`: the account key for everything.
 * - `"agent"`: create session, get session and connect require an agent's key.
 *
 * @since 0.1.0
 * @category models
 */
export type KeySelection = "agent-or-account" | "account" | "agent"

/**
 * The selection when none is given: `"agent-or-account"`.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultSelection: KeySelection = "agent-or-account"

/**
 * The key an operation is to use: the account key; the given agent's key; or none, because the
 * selection requires an agent's key and no agent was given.
 *
 * @since 0.1.0
 * @category models
 */
export type Choice<A> =
  | { readonly _tag: "Account" }
  | { readonly _tag: "Agent"; readonly agent: A }
  | { readonly _tag: "NoAgent" }

const ACCOUNT: Choice<never> = { _tag: "Account" }
const NO_AGENT: Choice<never> = { _tag: "NoAgent" }

/**
 * Which key an operation uses, for the selection and the agent given. `onboard` always uses
 * the account key: it is the account that onboards agents.
 *
 * @since 0.1.0
 * @category constructors
 */
export const choose = <A>(operation: Operation, selection: KeySelection, agent: A | undefined): Choice<A> => {
  if (operation === "onboard" || selection === "account") return ACCOUNT
  if (agent !== undefined) return { _tag: "Agent", agent }
  return selection === "agent" ? NO_AGENT : ACCOUNT
}

/**
 * The agent id a missing agent key names when no agent was given at all.
 *
 * @since 0.1.0
 * @category models
 */
export const noAgentId = "(none given)"

/**
 * Whether a key may be sent: not empty and not only white space. An unusable key is a
 * missing one: the operation fails before anything is sent.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUsable = (key: string): boolean => key.trim().length > 0

/**
 * The id of the agent an operation names: the id itself, or the `agentId` of a key reference;
 * `undefined` when no agent was named.
 *
 * @since 0.1.0
 * @category constructors
 */
export const agentIdOf = (agent: string | { readonly agentId: string } | undefined): string | undefined =>
  agent === undefined ? undefined : typeof agent === "string" ? agent : agent.agentId

/**
 * An agent and its key, when it has one, in the edition's secret type `K`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentKey<K> {
  readonly agentId: string
  readonly apiKey: K | undefined
}

/**
 * The key an operation is to use, as a {@link Ring} selects it: the account key (which the edition
 * reads afresh), the agent's key, or the agent whose key is missing or unusable (`MissingAgentKey`).
 *
 * @since 0.1.0
 * @category models
 */
export type Selected<K> =
  | { readonly _tag: "Account" }
  | { readonly _tag: "Agent"; readonly key: K }
  | { readonly _tag: "MissingAgentKey"; readonly agentId: string }

const USE_ACCOUNT: Selected<never> = { _tag: "Account" }

/**
 * The agents' keys a credentials service knows (given in advance, or remembered from onboarding),
 * and which key each operation uses: an agent named by id uses the key remembered for it, an
 * agent given with its key uses that key; a key that is not usable ({@link isUsable}, read through
 * `reveal`, which gives the value of the edition's secret type) is no key.
 *
 * @since 0.1.0
 * @category models
 */
export class Ring<K> {
  private readonly agents: Map<string, K | undefined>

  constructor(agents: Iterable<AgentKey<K>>, private readonly reveal: (key: K) => string) {
    this.agents = new Map(Array.from(agents, (agent) => [agent.agentId, agent.apiKey] as const))
  }

  /** Remembers an agent's key (an onboarded agent), so later operations can name it by id. */
  remember(agent: AgentKey<K>): void {
    this.agents.set(agent.agentId, agent.apiKey)
  }

  /** The key of an operation, for the selection and the agent given (by id or with its key). */
  select(operation: Operation, selection: KeySelection, agent: string | AgentKey<K> | undefined): Selected<K> {
    const choice = choose(operation, selection, agent)
    switch (choice._tag) {
      case "Account":
        return USE_ACCOUNT
      case "NoAgent":
        return { _tag: "MissingAgentKey", agentId: noAgentId }
      case "Agent": {
        const given = choice.agent
        const key = typeof given === "string" ? this.agents.get(given) : given.apiKey
        return key !== undefined && isUsable(this.reveal(key))
          ? { _tag: "Agent", key }
          : { _tag: "MissingAgentKey", agentId: typeof given === "string" ? given : given.agentId }
      }
    }
  }

  /**
   * Every secret known, revealed, for scrubbing text that might contain one: the account key
   * (when there is one; the edition reads it afresh) and every agent's key, usable or not.
   */
  secrets(account: K | undefined): Array<string> {
    const out: Array<string> = account === undefined ? [] : [this.reveal(account)]
    for (const key of this.agents.values()) if (key !== undefined) out.push(this.reveal(key))
    return out
  }
}
