/**
 * Every failure is a typed error: branch on it with `Effect.catchTags`.
 *
 * Each operation's error channel is the exact union of the tagged classes it can fail with: for
 * `AgentSessions.run`, `Errors.RunError` (docs/errors.md has the table, and a program that handles
 * every one of them). This program provokes five of them and shows that each arrives as itself,
 * with its own fields:
 *
 * - `InvalidRequest`: `max_actions: 0` fails validation; nothing is sent.
 * - `Unauthorized`: the service refuses a wrong key (HTTP 401); never retried.
 * - `MissingCredentials`: no key at all; nothing is sent.
 * - `NotFound`: a session that does not exist (the documented dialect has no retrieve operation,
 *   so the SDK answers `NotFound` without sending; the observed dialect asks the service).
 * - `InsecureTransport`: a plain `http://` address to a remote host is refused when the layer is
 *   built, before any key could travel in clear.
 *
 * Environment: AGENT_SESSION_API_KEY, AGENT_SESSION_BASE_URL (AGENT_SESSION_WS_URL optional) and,
 * optionally, AGENT_SESSION_DIALECT (see examples/quickstart.ts).
 *
 *   npx tsx examples/errors.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as ConfigError from "effect/ConfigError"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { AgentApi, AgentSessions, Errors, NodeAgentSessions } from "effect-agent-session"

const request = { start_url: "https://example.com", max_actions: 3, goal: "Read the page title" }

/**
 * One handler for every case: each error is told apart by its tag, and keeps its own fields.
 * A `ConfigError` (an environment variable missing) is not the SDK's: it is left to fail the program.
 */
const explain = <A, R>(
  attempt: Effect.Effect<A, Errors.AgentSessionError | ConfigError.ConfigError, R>
): Effect.Effect<string, ConfigError.ConfigError, R> =>
  attempt.pipe(
    Effect.as("succeeded"),
    Effect.catchTags({
      InvalidRequest: (error) => Effect.succeed(`InvalidRequest (${error.subject}, nothing sent): ${error.message}`),
      MissingCredentials: (error) =>
        Effect.succeed(`MissingCredentials (${error.operation}, nothing sent): set ${error.variable}`),
      Unauthorized: (error) => Effect.succeed(`Unauthorized (HTTP ${error.status}): ${error.message}`),
      NotFound: (error) => Effect.succeed(`NotFound (HTTP ${error.status}, ${error.operation})`),
      InsecureTransport: (error) => Effect.succeed(`InsecureTransport: refused to send a key to ${error.url}`)
    }),
    // Whatever is left of the SDK's errors is still typed: each has a `_tag` and a `message`.
    // (The arrow is inferred as a type guard, so a `ConfigError` stays in the error channel.)
    Effect.catchIf(
      (error) => Errors.isAgentSessionError(error),
      (error) => Effect.succeed(`${error._tag}${Errors.isRetryable(error) ? " (retryable)" : ""}: ${error.message}`)
    )
  )

const program = Effect.gen(function*() {
  // The configured account key and addresses, from the environment.
  const configured = NodeAgentSessions.layerConfig()

  const invalid = AgentSessions.run({ ...request, max_actions: 0 }).pipe(Effect.provide(configured))
  yield* Console.log(`1. ${yield* explain(invalid)}`)

  const wrongKey = AgentSessions.run(request).pipe(
    Effect.provide(NodeAgentSessions.layerConfig({ apiKey: Config.succeed(Redacted.make("not-a-valid-key")) }))
  )
  yield* Console.log(`2. ${yield* explain(wrongKey)}`)

  // An empty key counts as no key, as if AGENT_SESSION_API_KEY were unset.
  const noKey = AgentSessions.run(request).pipe(
    Effect.provide(NodeAgentSessions.layerConfig({ apiKey: Config.succeed(Redacted.make("")) }))
  )
  yield* Console.log(`3. ${yield* explain(noKey)}`)

  const unknownSession = Effect.flatMap(AgentApi.AgentApi, (api) => api.getSession("ses_does_not_exist")).pipe(
    Effect.provide(configured)
  )
  yield* Console.log(`4. ${yield* explain(unknownSession)}`)

  // Layer errors are typed too: the layer refuses a plain http:// address to a remote host.
  const insecure = AgentSessions.run(request).pipe(
    Effect.provide(NodeAgentSessions.layerConfig({ baseUrl: Config.succeed("http://agents.example.com") }))
  )
  yield* Console.log(`5. ${yield* explain(insecure)}`)
})

program.pipe(NodeRuntime.runMain)
