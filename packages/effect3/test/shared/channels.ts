/**
 * The error-channel pins' vocabulary, written once for both editions: the error channel of an
 * Effect, a Stream or a Layer, a user's handler error, and calls never made whose return types the
 * pins read.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import * as AgentSessions from "../../src/AgentSessions.js"
import type * as Credentials from "../../src/Credentials.js"

/** The error channel of an Effect, a Stream or a Layer. */
export type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E
  : T extends Stream.Stream<infer _A, infer E, infer _R> ? E
  : T extends Layer.Layer<infer _A, infer E, infer _R> ? E
  : never

/** The error channel of what a function returns. */
export type Fails<F extends (...args: ReadonlyArray<never>) => unknown> = ErrorOf<ReturnType<F>>

/** A user's handler error, which `run` passes through beside its own. */
export class HandlerError extends Data.TaggedError("HandlerError")<{ readonly reason: string }> {}

const request = { start_url: "https://example.com", goal: "g", max_actions: 1 }

// Never called: their return types are what the pins read.

/** The account key's look-up. */
export const keyForOnboard = (credentials: Credentials.Service) => credentials.keyFor("onboard")

/** An agent key's look-up. */
export const keyForSession = (credentials: Credentials.Service) => credentials.keyFor("createSession", "agent")

/** A run of the façade. */
export const run = (sessions: AgentSessions.Service) => sessions.run(request)

/** A run of the façade with handlers that may fail. */
export const runWithHandlers = (sessions: AgentSessions.Service) =>
  sessions.run(request, {
    onRequest: () => Effect.fail(new HandlerError({ reason: "no answer" })),
    onEvent: () => Effect.void
  })

/** A run through the façade's accessor. */
export const runAccessor = () => AgentSessions.run(request)

/** A session's events run batch by batch, with a function that cannot fail. */
export const forEachBatch = (running: AgentSessions.RunningSession) => running.forEachBatch(() => Effect.void)

/** A session's events run batch by batch, with a function that may fail. */
export const forEachBatchFailing = (running: AgentSessions.RunningSession) =>
  running.forEachBatch(() => Effect.fail(new HandlerError({ reason: "stop" })))
