/**
 * Agents: the onboard request and the agent the service returns.
 *
 * The declarations of the public module `Agent`, written once for both editions:
 * each edition's `src/Agent.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Model } from "effect-agent-session-core"
import { literals, optionFromOptionalKey, RedactedString } from "../src/internal/line.js"
import { NonBlankString } from "../src/internal/schema.js"

/**
 * The identifier of an agent, assigned by the service.
 *
 * @since 0.1.0
 * @category models
 */
export const AgentId = Schema.String.pipe(Schema.brand("effect-agent-session/AgentId"))

/**
 * @since 0.1.0
 * @category models
 */
export type AgentId = typeof AgentId.Type

/**
 * The purpose of an agent: one of the five values the document names.
 *
 * @since 0.1.0
 * @category models
 */
export const AgentDomain = literals(Model.agentDomains)

/**
 * @since 0.1.0
 * @category models
 */
export type AgentDomain = typeof AgentDomain.Type

/**
 * The body of `POST /agent/onboard`. `name` must be unique at the service (409 `Conflict`).
 *
 * @since 0.1.0
 * @category models
 */
export class OnboardRequest extends Schema.Class<OnboardRequest>("effect-agent-session/OnboardRequest")({
  name: NonBlankString,
  website: NonBlankString,
  domain: AgentDomain
}) {}

/**
 * What a caller passes to `onboard`: a plain object, validated before anything is sent.
 *
 * @since 0.1.0
 * @category models
 */
export type OnboardInput = typeof OnboardRequest.Encoded

/**
 * An agent, as the onboard response describes it. Fields the document does not name are ignored.
 * `apiKey` may be absent; when present it is `Redacted`, so it never prints.
 *
 * @since 0.1.0
 * @category models
 */
export class Agent extends Schema.Class<Agent>("effect-agent-session/Agent")({
  agentId: AgentId,
  name: Schema.String,
  website: Schema.String,
  domain: AgentDomain,
  apiKey: optionFromOptionalKey(RedactedString)
}) {}
