/**
 * How a conformance case runs through an edition's `AgentSessions` (`packages/conformance` says
 * what it does and judges it): the events and answers it observes, its watchers, its ending; and
 * how a replay scenario runs over the edition's in-memory replay (`AgentSessionsTest.replay`) on
 * the `TestClock` (`observeReplay`). Written once for both editions; `../helpers/line.ts` binds it
 * to the edition's Effect line.
 */
import { assert } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  type Case,
  type Ending,
  failed,
  type GivenAnswer,
  isKeepAlive,
  json,
  type Observation,
  type ReplayAnswer,
  replayAnswer,
  replayFailed,
  type ReplayObservation,
  type ReplayOptions,
  type ReplayProgram,
  type SeenEvent,
  type StartOptions,
  startWitness,
  verdict,
  type Watched
} from "effect-agent-session-conformance"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import * as Answer from "../../src/Answer.js"
import type * as Dialect from "../../src/Dialect.js"
import type * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { AgentSessionsTest } from "../../src/testing/index.js"
import { advanceBy, changesOf, failureIn, forkChild, outcomes, spacedRetries, successOf } from "../helpers/line.js"

/** An event as the suite records it. */
export const seen = (event: SessionEvent.SessionEvent): SeenEvent => {
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

export const answerOf = (given: GivenAnswer): Answer.Answer =>
  given._tag === "Deny" ? Answer.deny() : Answer.grant(given.input)

export const startOptions = (options: StartOptions): AgentSessions.StartOptions => ({
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
export const watch = (
  running: AgentSessions.RunningSession,
  answer: Answer.Answer,
  onEvent: (count: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Watched, never, Scope.Scope> =>
  Effect.gen(function*() {
    const opens: Array<number> = []
    let reconnecting = 0
    const reconnectErrors: Array<string> = []
    yield* Effect.forkScoped(Stream.runForEach(changesOf(running.state), (state: EventStream.ConnectionState) =>
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
    const results = yield* outcomes(running.events).pipe(
      Stream.tap((result) => {
        const event = successOf(result)
        if (event === undefined) return Effect.void
        if (isKeepAlive(event)) return Effect.sync(() => (keepAlives += 1))
        events.push(seen(event))
        const answered = event._tag === "ExternalResourceRequested"
          ? Effect.andThen(Effect.sync(() => (requests += 1)), Effect.ignore(running.respond(event, answer)))
          : Effect.void
        return Effect.andThen(answered, onEvent(events.length))
      }),
      Stream.runCollect,
      Effect.map((all) => Array.from(all))
    )
    // Both editions publish Closed before the consumer sees the end of the events.
    const state = yield* SubscriptionRef.get(running.state)
    const closed = state._tag === "Closed" ? state.reason : state._tag
    const last = results.at(-1)
    const lastFailure = last === undefined ? undefined : failureIn(last)
    const ending: Ending = lastFailure !== undefined
      ? failed(lastFailure)
      : yield* Effect.match(running.outcome, {
        onFailure: failed,
        onSuccess: (outcome): Ending => ({ _tag: "Complete", actions: outcome.actions })
      })
    return { events, ending, keepAlives, requests, opens, reconnecting, reconnectErrors, closed }
  })

/** A watcher that never started: the start itself failed. */
export const neverStarted = (error: { readonly _tag: string; readonly message: string }): Watched => ({
  events: [],
  ending: failed(error),
  keepAlives: 0,
  requests: 0,
  opens: [],
  reconnecting: 0,
  closed: "never started"
})

/** Runs a case's program through `AgentSessions`; what it observed. */
export const program = (c: Case): Effect.Effect<Observation, never, Scope.Scope | AgentSessions.AgentSessions> =>
  Effect.gen(function*() {
    const { scenario } = c
    const answer = answerOf(scenario.answer)
    const options = startOptions(scenario.start)
    const started = yield* Effect.match(AgentSessions.start(scenario.request, options), {
      onFailure: (error) => ({ running: undefined, error }),
      onSuccess: (running) => ({ running, error: undefined })
    })
    if (started.running === undefined) return { first: neverStarted(started.error) }
    const running = started.running
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
            ? Effect.andThen(Effect.sleep(Duration.millis(lagMs)), Effect.asVoid(forkChild(running.drain)))
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

/** A simulator as a live case needs it: its addresses, account key and dialect. */
export interface CaseSimulator {
  readonly baseUrl: string
  readonly wsUrl: string
  readonly accountKey: string
  readonly dialect: Dialect.Dialect
}

/** A reconnect schedule of the event channel. */
export type Reconnect = NonNullable<NonNullable<NodeAgentSessions.Options["events"]>["reconnect"]>

/**
 * Runs a live case through `NodeAgentSessions.layer` against `sim` over real sockets (behind the
 * suite's HTTP witness where the case asks for it), reconnecting on `reconnect` unless the case
 * says how often; what `verdict` finds must be nothing.
 */
export const runCase = (c: Case, sim: CaseSimulator, reconnect: Reconnect) =>
  Effect.gen(function*() {
    const witness = c.scenario.witness
      ? yield* Effect.acquireRelease(Effect.promise(() => startWitness(sim.baseUrl)), (w) => Effect.promise(w.close))
      : undefined
    const retries = c.scenario.httpRetries
    const sdk = NodeAgentSessions.layer({
      apiKey: c.scenario.wrongKey ?? sim.accountKey,
      baseUrl: witness?.url ?? sim.baseUrl,
      wsUrl: sim.wsUrl,
      dialect: sim.dialect,
      transport: c.variant.transport,
      events: {
        reconnect: c.scenario.reconnectRetries === undefined ? reconnect : spacedRetries(10, c.scenario.reconnectRetries)
      },
      http: retries === undefined ? undefined : { retry: spacedRetries(10, retries) }
    })
    const observed = yield* program(c).pipe(
      Effect.scoped,
      Effect.provide(Layer.orDie(sdk)),
      Effect.timeoutOption("45 seconds"),
      Effect.flatMap(Option.match({ onNone: () => Effect.die("the program did not end within 45 s"), onSome: Effect.succeed }))
    )
    const observation: Observation = witness === undefined ? observed : { ...observed, http: witness.recorded() }
    const secrets = [sim.accountKey, ...(c.scenario.wrongKey === undefined ? [] : [c.scenario.wrongKey])]
    assert.deepStrictEqual(verdict(c.scenario.expect, observation, secrets), [])
  }).pipe(Effect.scoped)

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

/** What a replay scenario's program did over this edition's replay, on virtual time. */
export const observeReplay = (path: string, options: ReplayOptions, program: ReplayProgram) =>
  Effect.gen(function*() {
    const events: Array<SeenEvent> = []
    const inReplay = Effect.gen(function*() {
      const fiber = yield* forkChild(Effect.match(AgentSessionsTest.withReplayErrors(replayProgram(program, events)), {
        onFailure: (error) => ({ failedIn: "program" as const, ending: replayFailed(error) }),
        onSuccess: (outcome) => ({ response: outcome.response, ending: { _tag: "Complete" as const, actions: outcome.actions } })
      }))
      yield* advanceBy("10 minutes")
      const ended = yield* Fiber.join(fiber)
      const observation: ReplayObservation = {
        ...ended,
        events,
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
      Effect.match({
        onFailure: (error): ReplayObservation => ({
          failedIn: "layer",
          events,
          ending: replayFailed(error),
          answers: [],
          connections: [],
          created: []
        }),
        onSuccess: (observation) => observation
      })
    )
  })
