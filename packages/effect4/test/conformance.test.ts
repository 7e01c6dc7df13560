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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import {
  type Case,
  cases,
  isKeepAlive,
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
  testAccountKey,
  verdict
} from "effect-agent-session-conformance"
import * as AgentApi from "../src/AgentApi.js"
import * as AgentSessions from "../src/AgentSessions.js"
import type * as Answer from "../src/Answer.js"
import * as Dialect from "../src/Dialect.js"
import * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import { AgentSessionsTest } from "../src/testing/index.js"
import { quick, Sim, simLayer } from "./helpers/sdk.js"
import { answerOf, program, seen } from "./shared/conformance.js"

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
