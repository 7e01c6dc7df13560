/**
 * The simulator's memory: agents, sessions, the current faults and scenario, and the key checks.
 */
import * as Crypto from "node:crypto"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import type * as Dialect from "effect-agent-session/Dialect"
import type { Faults, Scenario } from "../Simulator.js"
import { type SessionFaults, SessionState } from "./session.js"

/** An onboarded agent. The key is kept only as its SHA-256 digest. */
interface AgentRecord {
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

/** The principal of an identity: `"account"` or the agent's id (sessions and connections belong to one). */
export const principalOf = (identity: Identity): string =>
  identity._tag === "Account" ? accountPrincipal : identity.agent.agentId

/** The principal of the account key. */
const accountPrincipal = "account"

/** The bounds the store keeps (see `Simulator.Limits`). */
interface StoreLimits {
  readonly maxSessionsPerKey: number
  readonly maxSessions: number
  readonly maxAgents: number
  readonly maxAnswersPerRequest: number
}

/** Why a session or an agent could not be added. */
type AddRefused =
  | { readonly _tag: "TooManySessions"; readonly reason: string }
  | { readonly _tag: "TooManyAgents"; readonly reason: string }

/** The verdict on a key and a session id (handshakes, retrieve, SSE). */
export type Access =
  | { readonly _tag: "Ok"; readonly session: SessionState; readonly identity: Identity }
  | { readonly _tag: "Unauthorized"; readonly reason: string }
  | { readonly _tag: "Forbidden"; readonly reason: string }
  | { readonly _tag: "NotFound"; readonly reason: string }
  | { readonly _tag: "Conflict"; readonly reason: string }

/** What the HTTP fault gate decides for one request. */
type HttpGate =
  | { readonly _tag: "Unavailable" }
  | { readonly _tag: "RateLimited"; readonly retryAfter: string }
  | { readonly _tag: "Pass"; readonly delayMillis: number }

const digest = (key: string): Buffer => Crypto.createHash("sha256").update(key, "utf8").digest()

/** Random identifiers and keys. */
const randomId = (prefix: string, bytes: number): string =>
  `${prefix}${Crypto.randomBytes(bytes).toString("base64url")}`

/** The scenario's defaults. */
const defaultScenario: Scenario = { actions: 5, frameDelay: Duration.millis(5), ask: "permission" }

export class Store {
  private readonly accountDigest: Buffer
  readonly agentsById = new Map<string, AgentRecord>()
  private readonly agentsByName = new Map<string, AgentRecord>()
  private readonly agentsByDigest = new Map<string, AgentRecord>()
  readonly sessions = new Map<string, SessionState>()
  private readonly sessionsPerPrincipal = new Map<string, number>()
  faults: Faults = {}
  scenario: Scenario
  httpRequests = 0
  private unavailableLeft = 0
  private rateLimitedLeft = 0

  constructor(
    accountKey: string,
    scenario: Partial<Scenario>,
    faults: Faults,
    readonly dialect: Dialect.Dialect,
    readonly limits: StoreLimits
  ) {
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

  /** Onboards an agent and returns it with its fresh key (refused past `maxAgents`). */
  addAgent(input: { readonly name: string; readonly website: string; readonly domain: string }): {
    readonly agent: AgentRecord
    readonly apiKey: string
  } | AddRefused {
    if (this.agentsById.size >= this.limits.maxAgents) {
      return { _tag: "TooManyAgents", reason: `the simulator holds at most ${this.limits.maxAgents} agents` }
    }
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

  /**
   * Frees room for one more session of `principal`: past `maxSessionsPerKey` sessions of that
   * principal (or `maxSessions` in all), the oldest session without an open connection is
   * forgotten; when every one has an open connection, the new session is refused.
   */
  private makeRoom(principal: string): AddRefused | undefined {
    const evictOldest = (filter: (session: SessionState) => boolean): boolean => {
      for (const session of this.sessions.values()) {
        if (filter(session) && !session.connected) {
          this.forget(session)
          return true
        }
      }
      return false
    }
    if ((this.sessionsPerPrincipal.get(principal) ?? 0) >= this.limits.maxSessionsPerKey) {
      if (!evictOldest((session) => session.principal === principal)) {
        return {
          _tag: "TooManySessions",
          reason: `this key has ${this.limits.maxSessionsPerKey} sessions with an open connection (the most it may hold)`
        }
      }
    }
    if (this.sessions.size >= this.limits.maxSessions && !evictOldest(() => true)) {
      return {
        _tag: "TooManySessions",
        reason: `the simulator has ${this.limits.maxSessions} sessions with an open connection (the most it holds)`
      }
    }
    return undefined
  }

  private forget(session: SessionState): void {
    this.sessions.delete(session.id)
    const count = (this.sessionsPerPrincipal.get(session.principal) ?? 1) - 1
    if (count <= 0) this.sessionsPerPrincipal.delete(session.principal)
    else this.sessionsPerPrincipal.set(session.principal, count)
  }

  /** Creates a session with the current scenario and WebSocket faults (refused past the limits). */
  addSession(input: {
    readonly owner: Identity
    readonly goal: string
    readonly startUrl: string
    readonly maxActions: number
  }): SessionState | AddRefused {
    const principal = principalOf(input.owner)
    const refused = this.makeRoom(principal)
    if (refused !== undefined) return refused
    const id = randomId("ses_", 12)
    const ws = this.faults.ws ?? {}
    const faults: SessionFaults = {
      dropAfter: ws.dropAfter,
      malformedAt: ws.malformedAt,
      unknownEventAt: ws.unknownEventAt,
      oversize: ws.oversize,
      stall: ws.stall,
      exceedMaxActions: ws.exceedMaxActions,
      closeBeforeComplete: ws.closeBeforeComplete,
      replayOnReconnect: ws.replayOnReconnect
    }
    const scenario = this.scenario
    const session = new SessionState(
      id,
      principal,
      input.goal,
      input.startUrl,
      input.maxActions,
      {
        actions: scenario.actions,
        frameDelay: Duration.decode(scenario.frameDelay),
        ask: scenario.ask,
        askAfter: scenario.askAfter,
        bulkActions: scenario.bulkActions,
        actionSessionId: scenario.actionSessionId
      },
      faults,
      this.dialect,
      new Date(),
      this.limits.maxAnswersPerRequest
    )
    this.sessions.set(id, session)
    this.sessionsPerPrincipal.set(principal, (this.sessionsPerPrincipal.get(principal) ?? 0) + 1)
    return session
  }

  /**
   * Whether a key may read a session: an unknown key is `Unauthorized`, an unknown session
   * `NotFound`. A session belongs to the principal that created it: the account key may read any
   * session (its agents' too); an agent key only the sessions it created (`Forbidden` otherwise,
   * those created with the account key included).
   */
  access(key: string, sessionId: string): Access {
    const identity = this.identify(key)
    if (Option.isNone(identity)) return { _tag: "Unauthorized", reason: "missing or invalid API key" }
    const session = this.sessions.get(sessionId)
    if (session === undefined) return { _tag: "NotFound", reason: "unknown session" }
    if (identity.value._tag === "Agent" && session.principal !== identity.value.agent.agentId) {
      return { _tag: "Forbidden", reason: "the session belongs to another principal" }
    }
    return { _tag: "Ok", session, identity: identity.value }
  }

  /**
   * Whether a key may open a session's event channel: {@link access}, and, while another
   * principal holds an open connection to it, `Conflict` (only the same principal supersedes).
   */
  connectAccess(key: string, sessionId: string): Access {
    const access = this.access(key, sessionId)
    if (access._tag !== "Ok") return access
    if (!access.session.maySupersede(principalOf(access.identity))) {
      return { _tag: "Conflict", reason: "the session is connected by another principal" }
    }
    return access
  }
}
