/**
 * The simulator's memory: agents, sessions, the current faults and scenario, and the key checks.
 */
import * as Crypto from "node:crypto"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import type * as Dialect from "../../Dialect.js"
import type { Faults, Scenario } from "../Simulator.js"
import { type SessionFaults, SessionState } from "./session.js"

/** An onboarded agent. The key is kept only as its SHA-256 digest. */
export interface AgentRecord {
  readonly agentId: string
  readonly name: string
  readonly website: string
  readonly domain: string
  readonly keyDigest: Buffer
}

/** Who a key belongs to. */
export type Identity =
  | { readonly _tag: "Account" }
  | { readonly _tag: "Agent"; readonly agent: AgentRecord }

/** The verdict on a key and a session id (handshakes, retrieve, SSE). */
export type Access =
  | { readonly _tag: "Ok"; readonly session: SessionState; readonly identity: Identity }
  | { readonly _tag: "Unauthorized"; readonly reason: string }
  | { readonly _tag: "Forbidden"; readonly reason: string }
  | { readonly _tag: "NotFound"; readonly reason: string }

/** What the HTTP fault gate decides for one request. */
export type HttpGate =
  | { readonly _tag: "Unavailable" }
  | { readonly _tag: "RateLimited"; readonly retryAfter: string }
  | { readonly _tag: "Pass"; readonly delayMillis: number }

const digest = (key: string): Buffer => Crypto.createHash("sha256").update(key, "utf8").digest()

/** Random identifiers and keys. */
export const randomId = (prefix: string, bytes: number): string =>
  `${prefix}${Crypto.randomBytes(bytes).toString("base64url")}`

/** The scenario's defaults. */
export const defaultScenario: Scenario = { actions: 5, frameDelay: Duration.millis(5), ask: "permission" }

export class Store {
  private readonly accountDigest: Buffer
  readonly agentsById = new Map<string, AgentRecord>()
  private readonly agentsByName = new Map<string, AgentRecord>()
  private readonly agentsByDigest = new Map<string, AgentRecord>()
  readonly sessions = new Map<string, SessionState>()
  faults: Faults = {}
  scenario: Scenario
  httpRequests = 0
  private unavailableLeft = 0
  private rateLimitedLeft = 0

  constructor(accountKey: string, scenario: Partial<Scenario>, faults: Faults, readonly dialect: Dialect.Dialect) {
    this.accountDigest = digest(accountKey)
    this.scenario = { ...defaultScenario, ...scenario }
    this.setFaults(faults)
  }

  setFaults(faults: Faults): void {
    this.faults = faults
    this.unavailableLeft = Math.max(0, faults.http?.fail503 ?? 0)
    this.rateLimitedLeft = Math.max(0, faults.http?.rateLimit?.count ?? 0)
  }

  setScenario(scenario: Partial<Scenario>): void {
    this.scenario = { ...this.scenario, ...scenario }
  }

  /** Counts a request and consumes the HTTP faults in order: the 503s, then the 429s. */
  gate(): HttpGate {
    this.httpRequests += 1
    if (this.unavailableLeft > 0) {
      this.unavailableLeft -= 1
      return { _tag: "Unavailable" }
    }
    const rateLimit = this.faults.http?.rateLimit
    if (this.rateLimitedLeft > 0 && rateLimit !== undefined) {
      this.rateLimitedLeft -= 1
      return { _tag: "RateLimited", retryAfter: rateLimit.retryAfter }
    }
    const delay = this.faults.http?.delay
    return { _tag: "Pass", delayMillis: delay === undefined ? 0 : Duration.toMillis(delay) }
  }

  /**
   * Who a key belongs to. The digest of the key is compared with the account key's in constant
   * time (`timingSafeEqual` over equal-length digests); agent keys are looked up by digest, so
   * the lookup's timing says nothing about the key itself. Empty keys are nobody's.
   */
  identify(key: string): Option.Option<Identity> {
    if (key.length === 0) return Option.none()
    const keyDigest = digest(key)
    if (Crypto.timingSafeEqual(keyDigest, this.accountDigest)) return Option.some({ _tag: "Account" })
    const agent = this.agentsByDigest.get(keyDigest.toString("hex"))
    return agent === undefined ? Option.none() : Option.some({ _tag: "Agent", agent })
  }

  /** Whether a name is taken. */
  hasAgentNamed(name: string): boolean {
    return this.agentsByName.has(name)
  }

  /** Onboards an agent and returns it with its fresh key. */
  addAgent(input: { readonly name: string; readonly website: string; readonly domain: string }): {
    readonly agent: AgentRecord
    readonly apiKey: string
  } {
    const apiKey = randomId("agk_", 24)
    const agent: AgentRecord = {
      agentId: randomId("agt_", 12),
      name: input.name,
      website: input.website,
      domain: input.domain,
      keyDigest: digest(apiKey)
    }
    this.agentsById.set(agent.agentId, agent)
    this.agentsByName.set(agent.name, agent)
    this.agentsByDigest.set(agent.keyDigest.toString("hex"), agent)
    return { agent, apiKey }
  }

  /** Creates a session with the current scenario and WebSocket faults. */
  addSession(input: {
    readonly owner: Identity
    readonly goal: string
    readonly startUrl: string
    readonly maxActions: number
  }): SessionState {
    const id = randomId("ses_", 12)
    const ws = this.faults.ws ?? {}
    const faults: SessionFaults = {
      dropAfter: ws.dropAfter,
      malformedAt: ws.malformedAt,
      unknownEventAt: ws.unknownEventAt,
      oversize: ws.oversize,
      stall: ws.stall,
      exceedMaxActions: ws.exceedMaxActions,
      closeBeforeComplete: ws.closeBeforeComplete
    }
    const scenario = this.scenario
    const session = new SessionState(
      id,
      input.owner._tag === "Agent" ? input.owner.agent.agentId : undefined,
      input.goal,
      input.startUrl,
      input.maxActions,
      {
        actions: scenario.actions,
        frameDelay: Duration.decode(scenario.frameDelay),
        ask: scenario.ask,
        bulkActions: scenario.bulkActions
      },
      faults,
      this.dialect,
      new Date()
    )
    this.sessions.set(id, session)
    return session
  }

  /**
   * Whether a key may open (or read) a session: an unknown key is `Unauthorized`, an unknown
   * session `NotFound`, an agent key on another agent's session `Forbidden`. The account key may
   * open any session; an agent key its own and those created with the account key.
   */
  access(key: string, sessionId: string): Access {
    const identity = this.identify(key)
    if (Option.isNone(identity)) return { _tag: "Unauthorized", reason: "missing or invalid API key" }
    const session = this.sessions.get(sessionId)
    if (session === undefined) return { _tag: "NotFound", reason: "unknown session" }
    if (
      identity.value._tag === "Agent" && session.ownerAgentId !== undefined &&
      session.ownerAgentId !== identity.value.agent.agentId
    ) {
      return { _tag: "Forbidden", reason: "the session belongs to another agent" }
    }
    return { _tag: "Ok", session, identity: identity.value }
  }
}
