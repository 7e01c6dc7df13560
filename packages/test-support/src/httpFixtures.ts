/**
 * The HTTP fixtures of the AgentApi tests, plain data and `Response`s without Effect: both editions'
 * suites use them (the Effect 3 edition's `StubHttpClient.ts`, and `packages/effect4`'s).
 */

/** A JSON response. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

/** A text response. */
export const text = (status: number, body: string, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { "content-type": "text/plain", ...headers } })

/** The account key used by the unit tests: recognisable, so a leak is easy to find. */
export const ACCOUNT_KEY = "sk-account-SECRET-4f1d9c"

/** A well-formed agent body, with its own recognisable key. */
export const agentBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  agentId: "agent-1",
  name: "scout",
  website: "https://example.com",
  domain: "research",
  apiKey: "sk-agent-SECRET-77aa01",
  ...overrides
})

/** A well-formed documented session body. */
export const sessionBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  session_id: "sess-1",
  status: "started",
  start_time: "2025-01-02T03:04:05Z",
  ...overrides
})

/** A valid create-session input. */
export const validSession = {
  start_url: "https://example.com/start",
  max_actions: 5,
  goal: "Find the pricing page"
} as const

/** A valid onboard input. */
export const validAgent = { name: "scout", website: "https://example.com", domain: "research" } as const
