/**
 * Which key each operation authenticates with (U11), what a usable key is (U12), and where the
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
 * Which key an operation uses (U11):
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
 * Which key an operation uses, for the selection and the agent given (U11). `onboard` always uses
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
 * Whether a key may be sent: not empty and not only white space (U12). An unusable key is a
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
