/**
 * The hostile-server cases of the conformance suite (`hostileCases`, effect-agent-session-conformance)
 * run with the Effect 4 edition: the whole SDK (`NodeAgentSessions.layer`) pointed at a scriptable
 * hostile server on loopback (HTTP, WebSocket, Server-Sent Events). This runner only maps each
 * case's act to this edition's API and records what a caller could see (the typed outcome, every
 * log line at every level, every span, the time taken, the live heap); `hostileVerdict` judges it,
 * once for both editions (the Effect 3 edition's runner is `packages/effect3/test/hostile/sdk.test.ts`).
 * vitest runs with --expose-gc (the live heap after a collection).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  type ActResult,
  handles,
  type HostileAct,
  type HostileAnswer,
  type HostileCase,
  hostileCases,
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
import { type Span, spying } from "../helpers/spans.js"

const retryOf = (retry: Retry) =>
  Schedule.spaced(Duration.millis(retry.spacingMs)).pipe(Schedule.upTo({ times: retry.times }))

/** Every log line, at every level, as logfmt and as structured JSON. */
const capture = (lines: Array<string>) =>
  Logger.layer([
    Logger.make((options) => {
      lines.push(Logger.formatLogFmt.log(options))
      lines.push(JSON.stringify(Logger.formatStructured.log(options)))
    })
  ])

const millis = (value: number | undefined) => (value === undefined ? undefined : Duration.millis(value))

/** The whole SDK pointed at the hostile server, set up as the case says. */
/** The edition's whole-SDK layers: over Node (undici, `ws`), and over `fetch` and the standard `WebSocket`. */
const layers = { node: NodeAgentSessions.layer, fetch: FetchAgentSessions.layer } as const

type Runtime = keyof typeof layers

const sdk = (server: HostileServer, client: HostileClient, runtime: Runtime) => {
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
const act = (
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
        Effect.map((events) => ({ events: events.map(seenEvent) }))
      )
    case "AnswerThenClose":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        const connection = yield* channel.connect(hostileSession)
        const answering = yield* Effect.forkChild(answerEvery(connection, what.answer))
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
          const fiber = yield* Effect.forkChild(api.createSession(hostileRequest))
          yield* Effect.sleep(Duration.millis(delay))
          yield* Fiber.interrupt(fiber)
        }
        return {}
      })
    case "SubscribeAndDrop":
      return Effect.gen(function*() {
        const channel = yield* EventStream.EventStream
        for (const delay of what.delays) {
          const fiber = yield* Effect.forkChild(Stream.runDrain(channel.events(hostileSession)))
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
  spans: ReadonlyArray<Span>
): ReadonlyArray<SeenText> => {
  const texts: Array<SeenText> = []
  if (Exit.isFailure(exit)) {
    texts.push({ where: "Cause.pretty", text: Cause.pretty(exit.cause) })
    for (const failure of exit.cause.reasons.filter(Cause.isFailReason).map((reason) => reason.error)) {
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

/** One run of a case: its servers started, the act observed, what the servers and the process show. */
/**
 * The cases the standard (WHATWG) `WebSocket` of `FetchAgentSessions` cannot pass, each with why:
 * what the API does not give the SDK (the status of a refused upgrade, a frame before it is whole,
 * a text frame that is not UTF-8) or a bug of this edition's adapter. Each runs as known-failing
 * (`it.fails`, under a 5 s hang guard): when one passes, it leaves this list.
 */
const knownFailingOverFetch: ReadonlyArray<readonly [string, string]> = [
  // A standard WebSocket hands over a message only once it is whole, with no size limit of its own
  // below the runtime's: the SDK cannot refuse a frame by its announced length, and reads it whole.
  ["U22 a frame announcing 94 MiB", "the whole frame is read before the SDK sees it: the hang guard ends it"],
  ["U22 a frame announcing 200 MiB", "the runtime's own limit fails the socket: ConnectionLost, retried, not FrameTooLarge"],
  ["U22 with failOnFrameError: false", "the 64 MiB frame is read whole before the SDK sees it: the hang guard ends it"],
  ["U22 a message in small fragments", "the fragments are joined by the runtime without a limit: the hang guard ends it"],
  // The runtime closes a socket with a text frame that is not UTF-8 (1007) instead of handing it over.
  ["U09 a text frame that is not UTF-8", "the runtime closes with 1007: retried, then ConnectionLost, not MalformedFrame"],
  // A refused upgrade reaches a standard WebSocket as a bare `error`, without its status
  // (FetchAgentSessions' documentation says so): retried as an open failure, then NeverConnected.
  ["U12 a refused upgrade echoing the key", "no status: NeverConnected without code 401"],
  ["U08 a refused upgrade (401) whose body never ends", "no status: retried, NeverConnected"],
  ["a redirected upgrade (302)", "no status: the failure cannot name 302"]
]

const knownFailing = (hostile: HostileCase, runtime: Runtime): string | undefined =>
  runtime === "fetch" ? knownFailingOverFetch.find(([name]) => hostile.name.startsWith(name))?.[1] : undefined

/**
 * Node 22's standard `WebSocket` (undici) leaves the TCP socket of a failed handshake (a `101`
 * without `Sec-WebSocket-Accept`) open: it reports `error`, never `close`, and the SDK holds
 * nothing more to close it with. Over `FetchAgentSessions` that case's "nothing left open at the
 * server" is not checked; the rest of it is.
 */
const runtimeLeavesOpen = ["U22 a 101 without Sec-WebSocket-Accept"]

/** The case as this runtime can be held to it. */
const asRun = (hostile: HostileCase, runtime: Runtime): HostileCase => {
  if (runtime !== "fetch" || !runtimeLeavesOpen.some((name) => hostile.name.startsWith(name))) return hostile
  const expect = Object.fromEntries(Object.entries(hostile.expect).filter(([name]) => name !== "drained"))
  return { ...hostile, expect: expect as unknown as HostileCase["expect"] }
}

const runOnce = (hostile: HostileCase, runtime: Runtime, guardMs?: number) =>
  Effect.gen(function*() {
    const started = yield* Effect.acquireRelease(
      Effect.promise(() => startHostileCase(hostile)),
      (servers) => Effect.promise(servers.close)
    )
    const handlesBefore = handles()
    const heapBefore = hostile.expect.heapMiB === undefined ? undefined : liveHeap()
    const logs: Array<string> = []
    const spans: Array<Span> = []
    const tracer = spying(spans)
    const guard = guardMs ?? hostile.guardMs ?? 30_000
    const start = Date.now()
    const exit = yield* act(hostile.act, started.server).pipe(
      Effect.provide(sdk(started.server, hostile.client, runtime)),
      Effect.timeoutOrElse({ duration: Duration.millis(guard), orElse: () => Effect.fail("hang guard" as const) }),
      Effect.withTracer(tracer),
      Effect.provide(capture(logs)),
      Effect.provideService(References.MinimumLogLevel, "All"),
      Effect.exit
    )
    const took = Date.now() - start
    if (Option.getOrUndefined(Exit.findErrorOption(exit)) === "hang guard") {
      return assert.fail(`hung for more than ${guard} ms`)
    }
    const heapAfter = heapBefore === undefined ? undefined : liveHeap()
    const failure = Exit.findErrorOption(exit)
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

for (const runtime of ["node", "fetch"] as const) {
  describe(`hostile server (conformance hostile cases, Effect 4 edition, ${runtime === "node" ? "NodeAgentSessions" : "FetchAgentSessions"})`, () => {
    for (const hostile of hostileCases) {
      const known = knownFailing(hostile, runtime)
      const test = known === undefined ? it.live : it.live.fails
      test(known === undefined ? hostile.name : `${hostile.name} (known failing: ${known})`, () =>
        Effect.gen(function*() {
          const problems: Array<string> = []
          const runs = hostile.runs ?? 1
          for (let run = 0; run < runs; run++) {
            const { problems: found } = yield* runOnce(asRun(hostile, runtime), runtime, known === undefined ? undefined : 5_000)
            problems.push(...found.map((problem) => (runs > 1 ? `run ${run + 1}: ${problem}` : problem)))
          }
          assert.deepStrictEqual(problems, [], problems.join("\n"))
        }))
    }
  })
}
