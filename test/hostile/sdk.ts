/**
 * The SDK side of the hostile-server suite: the SDK pointed at a hostile server, everything a
 * caller could see captured (the typed outcome, log lines, spans), and the checks each case
 * makes: the key absent from all of it, a time bound (a generous hang guard), a memory bound
 * (the live heap after a collection; vitest runs with --expose-gc).
 */
import { assert } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as Util from "node:util"
import type * as Answer from "../../src/Answer.js"
import type * as Dialect from "../../src/Dialect.js"
import * as Errors from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type { SessionInfo } from "../../src/Session.js"
import { capture, sessionInfo as attachable, spying } from "../helpers/sdk.js"

/** The key the SDK holds; the hostile server echoes it everywhere it can. */
export const KEY = "sk-hostile-SECRET-7f3a9c21e0"

/** A session the SDK attaches to without creating it. */
export const sessionInfo = (sessionId = "hostile-session"): SessionInfo => attachable(sessionId)

/** A session request the SDK accepts. */
export const sessionRequest = { start_url: "https://example.com/", goal: "find the price", max_actions: 5 }

/** Quick reconnects: every 20 ms, at most `n` retries. */
export const quick = (n = 3): Schedule.Schedule<unknown, EventStream.AttemptError> =>
  Schedule.spaced("20 millis").pipe(Schedule.intersect(Schedule.recurs(n)))

/** The whole SDK (`NodeAgentSessions.layer`) pointed at a hostile server. */
export const sdk = (
  server: { readonly baseUrl: string; readonly wsUrl: string },
  options: {
    readonly transport?: "websocket" | "sse"
    readonly dialect?: Dialect.Dialect
    readonly http?: NodeAgentSessions.Options["http"]
    readonly events?: Omit<EventStream.Options, "url" | "dialect" | "allowInsecure">
  } = {}
) =>
  NodeAgentSessions.layer({
    apiKey: KEY,
    baseUrl: server.baseUrl,
    wsUrl: server.wsUrl,
    ...(options.transport === undefined ? {} : { transport: options.transport }),
    ...(options.dialect === undefined ? {} : { dialect: options.dialect }),
    http: { retry: Schedule.stop, timeout: "5 seconds", ...options.http },
    events: { reconnect: quick(), connectTimeout: "3 seconds", ...options.events }
  }).pipe(Layer.orDie)

/** Everything a caller could see of one run. */
export interface Seen<A, E> {
  readonly exit: Exit.Exit<A, E>
  readonly logs: ReadonlyArray<string>
  readonly spans: ReadonlyArray<Tracer.Span>
  readonly millis: number
}

/**
 * Runs an effect with every log line (all levels) and span captured, under a hang guard: past
 * `guard` (generous) the test fails instead of hanging. Nothing is printed.
 */
export const observe = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  guard: Duration.DurationInput = "30 seconds"
): Effect.Effect<Seen<A, E>, never, R> =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const spans: Array<Tracer.Span> = []
    const tracer = yield* spying(spans)
    const start = Date.now()
    const exit = yield* effect.pipe(
      Effect.timeoutFail({ duration: guard, onTimeout: () => "hang guard" as const }),
      Effect.withTracer(tracer),
      Effect.provide(Logger.replace(Logger.defaultLogger, capture(logs))),
      Logger.withMinimumLogLevel(LogLevel.All),
      Effect.exit
    )
    const millis = Date.now() - start
    if (Exit.isFailure(exit) && Option.getOrUndefined(Cause.failureOption(exit.cause)) === "hang guard") {
      return assert.fail(`hung for more than ${Duration.format(Duration.decode(guard))}`)
    }
    return { exit: exit as Exit.Exit<A, E>, logs, spans, millis }
  })

/** The typed failure of an exit (fails the test on success or a defect). */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure, got a success")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** Asserts a typed SDK error with the tag expected, and returns it narrowed. */
export const expectError = <T extends Errors.AgentSessionError["_tag"]>(
  exit: Exit.Exit<unknown, unknown>,
  tag: T
): Extract<Errors.AgentSessionError, { readonly _tag: T }> => {
  const error = failureOf(exit)
  assert.isTrue(Errors.isAgentSessionError(error), `not an SDK error: ${Util.inspect(error)}`)
  const typed = error as Errors.AgentSessionError
  assert.strictEqual(typed._tag, tag, typed.message)
  return typed as Extract<Errors.AgentSessionError, { readonly _tag: T }>
}

/** Every rendering of a value a caller might print. */
const renderings = (value: unknown): ReadonlyArray<string> => {
  const out = [Util.inspect(value, { depth: 10 })]
  try {
    out.push(JSON.stringify(value) ?? "")
  } catch {
    // not serializable: inspect is enough
  }
  if (value instanceof Error) out.push(String(value), value.message, value.stack ?? "")
  return out
}

/** The key is in nothing the caller sees: the outcome, its cause, the logs, the spans. */
export const assertKeyAbsent = (seen: Seen<unknown, unknown>, key = KEY): void => {
  const where: Array<[string, string]> = []
  if (Exit.isFailure(seen.exit)) {
    where.push(["Cause.pretty", Cause.pretty(seen.exit.cause)])
    for (const failure of Cause.failures(seen.exit.cause)) {
      for (const text of renderings(failure)) where.push(["error", text])
    }
  } else {
    for (const text of renderings(seen.exit.value)) where.push(["value", text])
  }
  for (const line of seen.logs) where.push(["log", line])
  for (const span of seen.spans) {
    where.push([`span ${span.name}`, `${span.name} ${JSON.stringify([...span.attributes.entries()])}`])
    // What a tracer exports of a span's end: the failure (an exporter records the cause).
    if (span.status._tag === "Ended" && Exit.isFailure(span.status.exit)) {
      where.push([`span ${span.name} failure`, Cause.pretty(span.status.exit.cause)])
    }
  }
  for (const [label, text] of where) {
    assert.notInclude(text, key, `the key leaks in ${label}`)
  }
}

/** The live heap after a collection, in bytes. */
export const liveHeap = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  assert.isDefined(gc, "vitest runs with --expose-gc")
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

/** Asserts the live heap grew by at most `mib` MiB since `before`. */
export const assertHeapWithin = (before: number, mib: number, label: string): void => {
  const grown = (liveHeap() - before) / (1024 * 1024)
  assert.isBelow(grown, mib, `${label}: the live heap grew by ${grown.toFixed(1)} MiB`)
}

/** The process's handles by kind (sockets, timers) now. */
export const handles = (): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/**
 * Waits (real time, polling) until the process holds no more sockets and timers than `before`,
 * up to `timeoutMs`; returns what is left over.
 */
export const handlesBackTo = (before: Record<string, number>, timeoutMs = 10_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    const extra = () => {
      const now = handles()
      const out: Record<string, number> = {}
      for (const kind of ["TCPSocketWrap", "Timeout", "TCPWRAP"]) {
        const delta = (now[kind] ?? 0) - (before[kind] ?? 0)
        if (delta > 0) out[kind] = delta
      }
      return out
    }
    while (Object.keys(extra()).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return extra()
  })

/**
 * Subscribes to `sessionId` 30 times, dropping each subscription after a pseudo-random 0 to 59 ms
 * (from `seed`: every run is the same), with everything a caller could see observed.
 */
export const subscribeAndDrop = (channel: EventStream.Service, sessionId: string, seed: number) => {
  let state = seed
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
  return observe(Effect.gen(function*() {
    for (let i = 0; i < 30; i++) {
      const fiber = yield* Effect.fork(Stream.runDrain(channel.events(sessionId)))
      yield* Effect.sleep(Duration.millis(Math.floor(random() * 60)))
      yield* Fiber.interrupt(fiber)
    }
  }))
}

/** Answers every request for a resource on `connection` with `answer` (a refused answer is ignored), to the stream's end. */
export const answerEvery = (connection: EventStream.Connection, answer: Answer.Answer) =>
  connection.events.pipe(
    Stream.runForEach((event) =>
      event._tag === "ExternalResourceRequested" ? Effect.ignore(connection.respond(event, answer)) : Effect.void
    )
  )
