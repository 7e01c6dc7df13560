/**
 * How a hostile case acts through an edition's whole SDK (`packages/conformance`'s hostile suite
 * says what the server does and judges the run): the SDK's layers pointed at the hostile server,
 * the case's act, and one run of a case (`runOnce`: its servers started, the act observed with
 * what a caller could see of it, the typed outcome, every log line at every level, every span, the
 * time taken, the live heap; `hostileVerdict`'s problems). Written once for both editions;
 * `../helpers/line.ts` binds it to the edition's Effect line.
 */
import { assert } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  type ActResult,
  handles,
  type HostileAct,
  type HostileAnswer,
  type HostileCase,
  type HostileClient,
  hostileDefaults,
  hostileFailed,
  hostileGetSession,
  hostileGrantInput,
  hostileKey,
  type HostileObservation,
  hostileRequest,
  type HostileServer,
  hostileSession,
  hostileVerdict,
  liveHeap,
  renderings,
  type Retry,
  type SeenEvent,
  type SeenText,
  serverSeen,
  startHostileCase,
  type StateSeen,
  untilPosts
} from "effect-agent-session-conformance"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as FetchAgentSessions from "../../src/FetchAgentSessions.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import {
  failureOf,
  failuresOf,
  forkChild,
  type RecordedSpan,
  recordSpans,
  spacedRetries,
  withFormattedLogs
} from "../helpers/line.js"

const retryOf = (retry: Retry) => spacedRetries(retry.spacingMs, retry.times)

const millis = (value: number | undefined) => (value === undefined ? undefined : Duration.millis(value))

/** The edition's whole-SDK layers: over Node (undici, `ws`), and over `fetch` and the standard `WebSocket`. */
const layers = { node: NodeAgentSessions.layer, fetch: FetchAgentSessions.layer } as const

export type Runtime = keyof typeof layers

/** The whole SDK pointed at the hostile server, set up as the case says. */
export const sdk = (server: HostileServer, client: HostileClient, runtime: Runtime) => {
  const http = client.http ?? {}
  const events = client.events ?? {}
  return layers[runtime]({
    apiKey: hostileKey,
    baseUrl: server.baseUrl,
    wsUrl: server.wsUrl,
    transport: client.transport ?? "websocket",
    dialect: client.dialect === "observed" ? Dialect.observed : Dialect.documented,
    http: {
      retry: retryOf(http.retry ?? hostileDefaults.http.retry),
      timeout: Duration.millis(http.timeoutMs ?? hostileDefaults.http.timeoutMs),
      maxResponseSize: http.maxResponseSize,
      createPolicy: http.createPolicy,
      maxRetryAfter: millis(http.maxRetryAfterMs)
    },
    events: {
      reconnect: retryOf(events.reconnect ?? hostileDefaults.events.reconnect),
      firstConnect: events.firstConnect === undefined ? undefined : retryOf(events.firstConnect),
      connectTimeout: Duration.millis(events.connectTimeoutMs ?? hostileDefaults.events.connectTimeoutMs),
      idleTimeout: millis(events.idleTimeoutMs),
      answerTimeout: millis(events.answerTimeoutMs),
      maxFrameSize: events.maxFrameSize,
      failOnFrameError: events.failOnFrameError,
      strict: events.strict
    }
  }).pipe(Layer.orDie)
}

const answerOf = (answer: HostileAnswer): Answer.Answer =>
  answer === "deny" ? Answer.deny() : Answer.grant(hostileGrantInput)

/** An event as the suite records it. */
const seenEvent = (event: SessionEvent.SessionEvent): SeenEvent => {
  switch (event._tag) {
    case "ActionRun":
      return { tag: event._tag, text: event.content }
    case "ThoughtsAndMemories":
      return { tag: event._tag, text: event.thought }
    default:
      return { tag: event._tag }
  }
}

const stateSeen = (state: EventStream.ConnectionState): StateSeen =>
  state._tag === "Closed"
    ? { tag: state._tag, reason: state.reason, unsent: (state.unsent ?? []).map((u) => ({ ...u })) }
    : { tag: state._tag }

/** Answers every request of the connection (a refused answer is ignored), to the stream's end. */
const answerEvery = (connection: EventStream.Connection, answer: HostileAnswer) =>
  connection.events.pipe(
    Stream.runForEach((event) =>
      event._tag === "ExternalResourceRequested" ? Effect.ignore(connection.respond(event, answerOf(answer))) : Effect.void
    )
  )

/** The case's act, through this edition's API. */
export const act = (
  what: HostileAct,
  server: HostileServer
): Effect.Effect<ActResult, unknown, AgentApi.AgentApi | EventStream.EventStream | AgentSessions.AgentSessions> => {
  switch (what._tag) {
    case "CreateSession":
      return Effect.as(Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(hostileRequest)), {})
    case "GetSession":
      return Effect.as(Effect.flatMap(AgentApi.AgentApi, (api) => api.getSession(hostileGetSession)), {})
    case "Events":
      return Effect.flatMap(EventStream.EventStream, (channel) => Stream.runCollect(channel.events(hostileSession))).pipe(
        Effect.map((events) => ({ events: Array.from(events).map(seenEvent) }))
      )
    case "AnswerThenClose":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(hostileSession)
        const answering = yield* forkChild(answerEvery(connection, what.answer))
        yield* Effect.promise(() => untilPosts(server, 1))
        const start = Date.now()
        yield* connection.close
        const closeMillis = Date.now() - start
        yield* Fiber.join(answering)
        return { closeMillis, state: stateSeen(yield* SubscriptionRef.get(connection.state)) }
      }).pipe(Effect.scoped)
    case "AnswerUntil":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(hostileSession)
        yield* Effect.forkScoped(answerEvery(connection, what.answer))
        yield* Effect.promise(() => untilPosts(server, what.posts))
        yield* Effect.sleep(Duration.millis(what.thenMs))
        return { state: stateSeen(yield* SubscriptionRef.get(connection.state)) }
      }).pipe(Effect.scoped)
    case "AnswerToEnd":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(hostileSession)
        yield* answerEvery(connection, what.answer)
        return { state: stateSeen(yield* SubscriptionRef.get(connection.state)) }
      }).pipe(Effect.scoped)
    case "Run":
      return AgentSessions.run(hostileRequest, { onRequest: () => Effect.succeed(answerOf(what.answer)) }).pipe(
        Effect.map((outcome) => ({ events: outcome.events.map(seenEvent) }))
      )
    case "InterruptCreates":
      return Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        for (const delay of what.delays) {
          const fiber = yield* forkChild(api.createSession(hostileRequest))
          yield* Effect.sleep(Duration.millis(delay))
          yield* Fiber.interrupt(fiber)
        }
        return {}
      })
    case "SubscribeAndDrop":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        for (const delay of what.delays) {
          const fiber = yield* forkChild(Stream.runDrain(channel.events(hostileSession)))
          yield* Effect.sleep(Duration.millis(delay))
          yield* Fiber.interrupt(fiber)
        }
        return {}
      })
  }
}

/** Every text a caller could see of a run: the outcome and its cause, the logs, the spans. */
const textsOf = (
  exit: Exit.Exit<ActResult, unknown>,
  logs: ReadonlyArray<string>,
  spans: ReadonlyArray<RecordedSpan>
): ReadonlyArray<SeenText> => {
  const texts: Array<SeenText> = []
  if (Exit.isFailure(exit)) {
    texts.push({ where: "Cause.pretty", text: Cause.pretty(exit.cause) })
    for (const failure of failuresOf(exit.cause)) {
      for (const text of renderings(failure)) texts.push({ where: "the error", text })
    }
  } else {
    for (const text of renderings(exit.value)) texts.push({ where: "the value", text })
  }
  for (const line of logs) texts.push({ where: "a log line", text: line })
  for (const span of spans) {
    texts.push({ where: `span ${span.name}`, text: `${span.name} ${JSON.stringify([...span.attributes.entries()])}` })
    // What a tracer exports of a span's end: the failure (an exporter records the cause).
    if (span.status._tag === "Ended" && Exit.isFailure(span.status.exit)) {
      texts.push({ where: `span ${span.name} failure`, text: Cause.pretty(span.status.exit.cause) })
    }
  }
  return texts
}

/**
 * One run of a case over `runtime`'s layers: its servers started, the act observed, what the
 * servers and the process show, and what `hostileVerdict` finds. `guardMs` (else the case's, else
 * 30 s) ends a run that hangs, which fails the test.
 */
export const runOnce = (hostile: HostileCase, runtime: Runtime, guardMs?: number) =>
  Effect.gen(function*() {
    const started = yield* Effect.acquireRelease(
      Effect.promise(() => startHostileCase(hostile)),
      (servers) => Effect.promise(servers.close)
    )
    const handlesBefore = handles()
    const heapBefore = hostile.expect.heapMiB === undefined ? undefined : liveHeap()
    const logs: Array<string> = []
    const spans: Array<RecordedSpan> = []
    const tracer = yield* recordSpans(spans)
    const guard = guardMs ?? hostile.guardMs ?? 30_000
    const start = Date.now()
    const guarded = act(hostile.act, started.server).pipe(
      Effect.provide(sdk(started.server, hostile.client, runtime)),
      Effect.timeoutOption(Duration.millis(guard)),
      Effect.flatMap(Option.match({ onNone: () => Effect.fail("hang guard" as const), onSome: Effect.succeed })),
      Effect.withTracer(tracer)
    )
    const exit = yield* Effect.exit(withFormattedLogs(logs, guarded))
    const took = Date.now() - start
    if (Exit.isFailure(exit) && Option.getOrUndefined(failureOf(exit.cause)) === "hang guard") {
      return assert.fail(`hung for more than ${guard} ms`)
    }
    const heapAfter = heapBefore === undefined ? undefined : liveHeap()
    const failure = Exit.isFailure(exit) ? failureOf(exit.cause) : Option.none()
    if (Exit.isFailure(exit) && Option.isNone(failure)) return assert.fail(`not a typed failure: ${Cause.pretty(exit.cause)}`)
    const observed: HostileObservation = {
      ending: Option.isSome(failure)
        ? hostileFailed(failure.value as { readonly _tag: string; readonly message: string })
        : { _tag: "Ok" },
      ...(Exit.isSuccess(exit) ? { result: exit.value } : {}),
      millis: took,
      texts: textsOf(exit, logs, spans),
      spans: spans.map((span) => ({ name: span.name, attributes: [...span.attributes.keys()] })),
      ...(heapBefore === undefined || heapAfter === undefined ? {} : { heapGrowth: heapAfter - heapBefore }),
      server: yield* Effect.promise(() => serverSeen(hostile, started, handlesBefore))
    }
    return { observed, problems: hostileVerdict(hostile, observed) }
  }).pipe(Effect.scoped)

/** Runs a case as many times as it says (`runs`, else once): the problems of every run. */
export const problemsOf = (hostile: HostileCase, runtime: Runtime, guardMs?: number) =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const runs = hostile.runs ?? 1
    for (let run = 0; run < runs; run++) {
      const { problems: found } = yield* runOnce(hostile, runtime, guardMs)
      problems.push(...found.map((problem) => (runs > 1 ? `run ${run + 1}: ${problem}` : problem)))
    }
    return problems
  })
