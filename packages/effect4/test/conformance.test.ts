/**
 * The conformance suite (`packages/conformance`, effect-agent-session-conformance) run with the
 * Effect 4 edition: every scenario in each of its variants, against its own simulator, the root's
 * command line as a child process (`simulate --port 0 --json` with the scenario's flags,
 * `helpers/simulator.ts`; one child for the cases of the same dialect and flags), through `AgentSessions` over `NodeAgentSessions.layer`, over real
 * sockets. What the scenario expects is judged by the suite's `verdict`, once for both editions;
 * `packages/effect3/test/conformance.test.ts` runs the same scenarios with the Effect 3 edition. The
 * replay scenarios run the same way, over this edition's in-memory replay
 * (`AgentSessionsTest.replay`) on the `TestClock`, judged by the suite's `replayVerdict`.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { TestClock } from "effect/testing"
import {
  type Case,
  cases,
  type Ending,
  failed,
  type GivenAnswer,
  isKeepAlive,
  json,
  type Observation,
  recordingPath,
  type ReplayAnswer,
  replayAnswer,
  replayFailed,
  type ReplayObservation,
  type ReplayOptions,
  type ReplayProgram,
  replayScenarios,
  replayVerdict,
  scenarios,
  type SeenEvent,
  startWitness,
  type StartOptions,
  testAccountKey,
  verdict,
  type Watched
} from "effect-agent-session-conformance"
import * as AgentApi from "../src/AgentApi.js"
import * as AgentSessions from "../src/AgentSessions.js"
import * as Answer from "../src/Answer.js"
import * as Dialect from "../src/Dialect.js"
import type * as EventStream from "../src/EventStream.js"
import * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import { AgentSessionsTest } from "../src/testing/index.js"
import { quick, Sim, simLayer } from "./helpers/sdk.js"

/** An event as the suite records it. */
const seen = (event: SessionEvent.SessionEvent): SeenEvent => {
  switch (event._tag) {
    case "ActionRun":
      return { tag: event._tag, text: event.content }
    case "ThoughtsAndMemories":
      return { tag: event._tag, text: event.thought }
    case "Unrecognized":
      return { tag: event._tag, text: event.event, payload: json(event.payload) }
    case "ExternalResourceGranted":
      return { tag: event._tag, granted: event.granted, input: Option.getOrNull(event.input) }
    default:
      return { tag: event._tag }
  }
}

const answerOf = (given: GivenAnswer): Answer.Answer =>
  given._tag === "Deny" ? Answer.deny() : Answer.grant(given.input)

const startOptions = (options: StartOptions): AgentSessions.StartOptions => ({
  maxFrameSize: options.maxFrameSize,
  failOnFrameError: options.failOnFrameError,
  strict: options.strict,
  idleTimeout: options.idleTimeoutMs === undefined ? undefined : Duration.millis(options.idleTimeoutMs),
  onBudgetExceeded: options.onBudgetExceeded,
  replaysOnReconnect: options.replaysOnReconnect,
  bufferSize: options.bufferSize
})

/**
 * Consumes a watcher's events to their end, answering every request with `answer`; `onEvent` runs
 * after each event (keep-alives aside) with how many there were so far.
 */
const watch = (
  running: AgentSessions.RunningSession,
  answer: Answer.Answer,
  onEvent: (count: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Watched, never, Scope.Scope> =>
  Effect.gen(function*() {
    const opens: Array<number> = []
    let reconnecting = 0
    const reconnectErrors: Array<string> = []
    yield* Effect.forkScoped(Stream.runForEach(SubscriptionRef.changes(running.state), (state: EventStream.ConnectionState) =>
      Effect.sync(() => {
        if (state._tag === "Open") opens.push(state.reconnects)
        if (state._tag === "Reconnecting") {
          reconnecting += 1
          reconnectErrors.push(state.lastError)
        }
      })))
    let requests = 0
    let keepAlives = 0
    const events: Array<SeenEvent> = []
    const results = yield* Stream.result(running.events).pipe(
      Stream.tap((result) => {
        if (Result.isFailure(result)) return Effect.void
        if (isKeepAlive(result.success)) return Effect.sync(() => (keepAlives += 1))
        const event = result.success
        events.push(seen(event))
        const answered = event._tag === "ExternalResourceRequested"
          ? Effect.andThen(Effect.sync(() => (requests += 1)), Effect.ignore(running.respond(event, answer)))
          : Effect.void
        return Effect.andThen(answered, onEvent(events.length))
      }),
      Stream.runCollect
    )
    // Both editions publish Closed before the consumer sees the end of the events.
    const state = yield* SubscriptionRef.get(running.state)
    const closed = state._tag === "Closed" ? state.reason : state._tag
    const last = results.at(-1)
    const ending: Ending = last !== undefined && Result.isFailure(last)
      ? failed(last.failure)
      : yield* Effect.match(running.outcome, {
        onFailure: failed,
        onSuccess: (outcome): Ending => ({ _tag: "Complete", actions: outcome.actions })
      })
    return { events, ending, keepAlives, requests, opens, reconnecting, reconnectErrors, closed }
  })

/** A watcher that never started: the start itself failed. */
const neverStarted = (error: { readonly _tag: string; readonly message: string }): Watched => ({
  events: [],
  ending: failed(error),
  keepAlives: 0,
  requests: 0,
  opens: [],
  reconnecting: 0,
  closed: "never started"
})

/** Runs a case's program through `AgentSessions`; what it observed. */
const program = (c: Case): Effect.Effect<Observation, never, Scope.Scope | AgentSessions.AgentSessions> =>
  Effect.gen(function*() {
    const { scenario } = c
    const answer = answerOf(scenario.answer)
    const options = startOptions(scenario.start)
    const started = yield* Effect.result(AgentSessions.start(scenario.request, options))
    if (Result.isFailure(started)) return { first: neverStarted(started.failure) }
    const running = started.success
    switch (scenario.program._tag) {
      case "start":
        return { first: yield* watch(running, answer) }
      case "supersede": {
        const after = scenario.program.afterEvents
        const reached = yield* Deferred.make<void>()
        const first = yield* Effect.forkScoped(
          watch(running, answer, (count) => (count === after ? Effect.asVoid(Deferred.succeed(reached, undefined)) : Effect.void))
        )
        yield* Deferred.await(reached)
        const other = yield* AgentSessions.attach(running.session, scenario.request.max_actions, options).pipe(Effect.orDie)
        const second = yield* watch(other, answer)
        return { first: yield* Fiber.join(first), second }
      }
      case "drain": {
        const { afterEvents, lagMs } = scenario.program
        // The watcher lags, then drains its connection while it reads on.
        const first = yield* watch(running, answer, (count) =>
          count === afterEvents
            ? Effect.andThen(Effect.sleep(Duration.millis(lagMs)), Effect.asVoid(Effect.forkChild(running.drain)))
            : Effect.void)
        const other = yield* AgentSessions.attach(running.session, scenario.request.max_actions, options).pipe(Effect.orDie)
        return { first, second: yield* watch(other, answer) }
      }
      case "attachAfterComplete": {
        const first = yield* watch(running, answer)
        const other = yield* AgentSessions.attach(running.session, scenario.request.max_actions, options).pipe(Effect.orDie)
        return { first, second: yield* watch(other, answer) }
      }
    }
  })

/**
 * The cases that can share one simulator child (starting one takes seconds): those of the same
 * dialect and flags, whose faults apply to each session apart. A case with the witness counts the
 * HTTP faults, which the simulator spends across sessions: it gets its own.
 */
const groups = (all: ReadonlyArray<Case>): ReadonlyArray<ReadonlyArray<Case>> => {
  const byKey = new Map<string, Array<Case>>()
  for (const c of all) {
    const key = c.scenario.witness ? c.title : JSON.stringify([c.variant.dialect, c.scenario.simulator])
    byKey.set(key, [...(byKey.get(key) ?? []), c])
  }
  return [...byKey.values()]
}

/** Runs a case against the simulator of its group; what must hold is asserted. */
const runCase = (c: Case) =>
  Effect.gen(function*() {
    const sim = yield* Sim
    const witness = c.scenario.witness
      ? yield* Effect.acquireRelease(Effect.promise(() => startWitness(sim.baseUrl)), (w) => Effect.promise(w.close))
      : undefined
    const retries = c.scenario.httpRetries
    const sdk = NodeAgentSessions.layer({
      apiKey: c.scenario.wrongKey ?? sim.accountKey,
      baseUrl: witness?.url ?? sim.baseUrl,
      wsUrl: sim.wsUrl,
      dialect: Dialect.fromName(sim.dialect),
      transport: c.variant.transport,
      events: {
        reconnect: c.scenario.reconnectRetries === undefined
          ? quick
          : Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: c.scenario.reconnectRetries }))
      },
      http: retries === undefined ? undefined : {
        retry: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: retries }))
      }
    })
    const observed = yield* program(c).pipe(
      Effect.scoped,
      Effect.provide(Layer.orDie(sdk)),
      Effect.timeoutOrElse({
        duration: "45 seconds",
        orElse: () => Effect.die("the program did not end within 45 s")
      })
    )
    const observation: Observation = witness === undefined ? observed : { ...observed, http: witness.recorded() }
    const secrets = [sim.accountKey, ...(c.scenario.wrongKey === undefined ? [] : [c.scenario.wrongKey])]
    assert.deepStrictEqual(verdict(c.scenario.expect, observation, secrets), [])
  }).pipe(Effect.scoped)

describe("conformance (Effect 4 edition)", () => {
  for (const group of groups(cases(scenarios))) {
    const first = group[0]
    if (first === undefined) continue
    layer(simLayer({ dialect: first.variant.dialect, ...first.scenario.simulator }), {
      excludeTestServices: true,
      timeout: "90 seconds"
    })((it) => {
      for (const c of group) it.effect(c.title, () => runCase(c), 90_000)
    })
  }
})

const replayOptions = (options: ReplayOptions): AgentSessionsTest.ReplayOptions => {
  const input = options.redactAnswerInput
  return {
    answerTimeout: options.answerTimeoutMs === undefined ? undefined : Duration.millis(options.answerTimeoutMs),
    maxLineLength: options.maxLineLength,
    redact: input === undefined ? undefined : (entry) =>
      entry.type === "answer" && entry.data.input !== undefined ? { ...entry, data: { ...entry.data, input } } : entry
  }
}

const replayAnswerOf = (given: ReplayAnswer, request: SessionEvent.ExternalResourceRequested): Answer.Answer =>
  answerOf(replayAnswer(given, Option.getOrUndefined(request.field_name)))

/** Runs a replay scenario's program; the events it received go to `events`. */
const replayProgram = (program: ReplayProgram, events: Array<SeenEvent>) => {
  const onEvent = (event: SessionEvent.SessionEvent) =>
    Effect.sync(() => {
      if (!isKeepAlive(event)) events.push(seen(event))
    })
  switch (program._tag) {
    case "run":
      return AgentSessions.run(program.request, {
        onEvent,
        onRequest: (request) => Effect.succeed(replayAnswerOf(program.answer, request))
      })
    case "neverAnswer":
      return Effect.scoped(Effect.gen(function*() {
        const running = yield* AgentSessions.start(program.request)
        yield* Stream.runForEach(running.events, onEvent)
        return yield* running.outcome
      }))
  }
}

/**
 * Virtual time advanced in steps of a second: Effect 4's `TestClock.adjust` runs the forked
 * program once before it wakes the sleeps due, so a program not yet at its first sleep needs them.
 */
const advance = (total: Duration.Input) =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(total)) / 1_000)
    for (let i = 0; i < steps; i++) yield* TestClock.adjust("1 second")
  })

/** What a replay scenario's program did over this edition's replay, on virtual time. */
const observeReplay = (path: string, options: ReplayOptions, program: ReplayProgram) =>
  Effect.gen(function*() {
    const events: Array<SeenEvent> = []
    const inReplay = Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.result(AgentSessionsTest.withReplayErrors(replayProgram(program, events))))
      yield* advance("10 minutes")
      const result = yield* Fiber.join(fiber)
      const observation: ReplayObservation = {
        ...(Result.isFailure(result) ? { failedIn: "program" as const } : { response: result.success.response }),
        events,
        ending: Result.isFailure(result) ? replayFailed(result.failure) : { _tag: "Complete", actions: result.success.actions },
        answers: (yield* AgentSessionsTest.answers).map(({ answer }) =>
          answer._tag === "Grant" ? [true, Option.getOrNull(answer.input)] as const : [false, null] as const
        ),
        connections: yield* AgentSessionsTest.connections,
        created: (yield* AgentSessionsTest.sessionsCreated).map((request) => request.goal),
        canRetrieve: (yield* AgentApi.AgentApi).canRetrieve
      }
      return observation
    })
    return yield* Effect.provide(inReplay, AgentSessionsTest.replay(path, replayOptions(options))).pipe(
      Effect.catch((error) =>
        Effect.succeed<ReplayObservation>({
          failedIn: "layer",
          events,
          ending: replayFailed(error),
          answers: [],
          connections: [],
          created: []
        })
      )
    )
  })

describe("conformance replays (Effect 4 edition)", () => {
  for (const s of replayScenarios) {
    it.effect(s.name, () =>
      Effect.gen(function*() {
        const observed = yield* observeReplay(recordingPath(s.recording), s.options, s.program)
        assert.deepStrictEqual(replayVerdict(s.expect, observed, [testAccountKey]), [])
      }))
  }
})
