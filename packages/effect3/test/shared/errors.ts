/**
 * The error tests' fixtures, written once for both editions: the keys no error, log line or span
 * may show, the checks that they do not, the replies in which the service echoes a key back, an
 * onboarding against such a reply, and one error of each kind, retryable or not.
 */
import { assert } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Dialect from "../../src/Dialect.js"
import * as Errors from "../../src/Errors.js"
import { ACCOUNT_KEY, json, makeApi, type Reply, text, validAgent } from "./StubHttpClient.js"
import { forkChild, tapCause, TestClock } from "../helpers/line.js"

/** An agent's key of the error tests. */
export const AGENT_KEY = "sk-agent-SECRET-77aa01"

/** Another agent's key of the error tests. */
export const OTHER_AGENT_KEY = "sk-other-agent-SECRET-5e5e"

/** Every key of the error tests. */
export const KEYS = [ACCOUNT_KEY, AGENT_KEY, OTHER_AGENT_KEY]

/** Fails the test when `text` shows a key. */
export const assertNoKey = (label: string, text: string): void => {
  for (const key of KEYS) assert.notInclude(text, key, `${label} leaks a key`)
}

/** Fails the test when the error shows a key in its message, its text, its JSON or its cause. */
export const assertErrorClean = (error: Errors.AgentSessionError): void => {
  assertNoKey(`${error._tag}.message`, error.message)
  assertNoKey(`String(${error._tag})`, String(error))
  assertNoKey(`JSON.stringify(${error._tag})`, JSON.stringify(error))
  assertNoKey(`Cause.pretty(${error._tag})`, Cause.pretty(Cause.fail(error)))
}

/** The scenarios in which the service (or the network) might echo a key back. */
export const scenarios: ReadonlyArray<readonly [string, Reply]> = [
  ["401 echoing the key in JSON", (r) => json(401, { error: `invalid key ${r.headers["authorization"]}` })],
  ["403 echoing the key in text", () => text(403, `key ${ACCOUNT_KEY} may not do this`)],
  ["400 echoing the request headers", (r) => json(400, { message: "bad", headers: r.headers })],
  ["409 echoing another agent's key", () => json(409, { error: `taken by ${OTHER_AGENT_KEY}` })],
  ["422 with an apiKey member", () => json(422, { error: "bad", apiKey: "sk-unknown-to-us" })],
  ["429 echoing the key", () => json(429, { error: `slow down ${ACCOUNT_KEY}` }, { "retry-after": "1" })],
  ["503 echoing the key", () => text(503, `down; your key was ${ACCOUNT_KEY}`)],
  ["418 echoing the key", () => json(418, { error_description: ACCOUNT_KEY }, { "x-request-id": ACCOUNT_KEY })],
  ["a transport failure naming the key", () => "refuse"],
  ["a 2xx with a bad body carrying a key", () => json(200, { agentId: 1, apiKey: ACCOUNT_KEY })],
  ["a 2xx that is not JSON, carrying the key", () => text(200, `<html>${ACCOUNT_KEY}</html>`)]
]

/**
 * Onboards against `reply` with the account key and another agent's key known, logging the
 * failure and its cause, on the test clock: the error it fails with.
 */
export const runScenario = (reply: Reply, dialect: Dialect.Dialect) =>
  Effect.gen(function*() {
    const { api } = yield* makeApi(reply, {
      dialect,
      credentials: {
        apiKey: Redacted.make(ACCOUNT_KEY),
        agents: [{ agentId: "other", apiKey: Option.some(Redacted.make(OTHER_AGENT_KEY)) }]
      }
    })
    const fiber = yield* forkChild(
      Effect.flip(api.onboard(validAgent)).pipe(
        Effect.tap((error) => Effect.logError("onboard failed", error)),
        tapCause((cause) => Effect.logError(cause))
      )
    )
    yield* TestClock.adjust(Duration.minutes(5))
    return yield* Fiber.join(fiber)
  })

const http = {
  message: "m",
  body: "",
  requestId: Option.none(),
  operation: "AgentApi.createSession"
}

/** One error of each kind a retry may cure. */
export const retryable: ReadonlyArray<Errors.AgentSessionError> = [
  new Errors.TransportError({ operation: "x", message: "reset" }),
  new Errors.RequestTimeout({ operation: "x", timeout: Duration.seconds(30) }),
  new Errors.RateLimited({ ...http, status: 429, retryAfter: Option.none() }),
  new Errors.ServerError({ ...http, status: 500, retryAfter: Option.none() }),
  new Errors.ServerError({ ...http, status: 503, retryAfter: Option.some(Duration.seconds(1)) }),
  new Errors.UnexpectedStatus({ ...http, status: 408 })
]

/** One error of each kind a retry cannot cure. */
export const notRetryable: ReadonlyArray<Errors.AgentSessionError> = [
  new Errors.BadRequest({ ...http, status: 400 }),
  new Errors.BadRequest({ ...http, status: 422 }),
  new Errors.Unauthorized({ ...http, status: 401 }),
  new Errors.Forbidden({ ...http, status: 403 }),
  new Errors.NotFound({ ...http, status: 404 }),
  new Errors.Conflict({ ...http, status: 409 }),
  new Errors.PayloadTooLarge({ ...http, status: 413 }),
  new Errors.UnexpectedStatus({ ...http, status: 418 }),
  new Errors.InvalidRequest({ subject: "s", message: "m" }),
  new Errors.MissingCredentials({ operation: "onboard", variable: "AGENT_SESSION_API_KEY" }),
  new Errors.MissingAgentKey({ agentId: "a" }),
  new Errors.ResponseDecodeError({ operation: "x", status: 200, message: "m", body: "" }),
  new Errors.InsecureTransport({ url: "http://x" })
]
