/**
 * The conformance suite (`packages/conformance`, effect-agent-session-conformance) run with the
 * Effect 3 edition: every scenario in each of its variants, against its own simulator started in
 * process on port 0 (its `--fault` flags read by the command line's `parseFaults`), through
 * `AgentSessions` over `NodeAgentSessions.layer`, over real sockets (`runCase` of
 * `shared/conformance.ts`, written once for both editions). What the scenario expects is
 * judged by the suite's `verdict`, once for both editions; `packages/effect4/test/conformance.test.ts`
 * runs the same scenarios with the Effect 4 edition. The replay scenarios run over each edition's
 * in-memory replay in `shared/conformance.test.ts`, written once for both editions. The checks of
 * the verdicts themselves (each can fail) are here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import {
  type Case,
  cases,
  type Ending,
  type ReplayObservation,
  replayVerdict,
  scenarios,
  type SeenEvent,
  testAccountKey,
  verdict,
  type Watched
} from "effect-agent-session-conformance"
import { parseFaults } from "effect-agent-session-cli/Simulate"
import * as Dialect from "../src/Dialect.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import { fastReconnect } from "./helpers/simulation.js"
import { runCase } from "./shared/conformance.js"

/** The simulator of a case, in process on port 0, with the scenario's flags. */
const simulatorFor = (c: Case) =>
  Effect.gen(function*() {
    const flags = c.scenario.simulator
    const faults = parseFaults(flags.faults)
    if (Either.isLeft(faults)) return yield* Effect.dieMessage(faults.left)
    return yield* Simulator.make({
      port: 0,
      dialect: Dialect.fromName(c.variant.dialect),
      scenario: { actions: flags.actions, ask: flags.ask, frameDelay: Duration.millis(flags.frameDelay) },
      faults: faults.right
    }).pipe(Effect.orDie)
  })

describe("conformance (Effect 3 edition)", () => {
  for (const c of cases(scenarios)) {
    it.live(c.title, () => Effect.flatMap(simulatorFor(c), (sim) => runCase(c, sim, fastReconnect)).pipe(Effect.scoped), 60_000)
  }
})

/** A script of `n` actions as the suite records it: what a client that got it exactly once saw. */
const script = (n: number): ReadonlyArray<SeenEvent> => [
  { tag: "Started" },
  { tag: "BrowserStarted" },
  ...Array.from({ length: n }, (_, i) => [
    { tag: "ThoughtsAndMemories", text: `Step ${i + 1} of ${n}` },
    { tag: "ActionRun", text: `click (action ${i + 1} of ${n})` }
  ]).flat(),
  { tag: "Complete" }
]

const watched = (events: ReadonlyArray<SeenEvent>, ending: Ending = { _tag: "Complete", actions: 3 }): Watched => ({
  events,
  ending,
  keepAlives: 0,
  requests: 0,
  opens: [0],
  reconnecting: 0,
  closed: "complete"
})

describe("the conformance verdict (each check can fail)", () => {
  const whole = { first: { ending: "Complete", whole: 3, actions: 3, opens: [0], closed: "complete" }, keyNeverInError: true }

  it("a script received exactly once passes; one repeated, lost or out of order does not", () => {
    assert.deepStrictEqual(verdict(whole, { first: watched(script(3)) }, []), [])
    const events = script(3)
    const repeated = [...events.slice(0, 4), ...events.slice(3)]
    const lost = events.filter((event) => event.text !== "click (action 2 of 3)")
    const swapped = [events[0], events[1], events[4], events[5], events[2], events[3], ...events.slice(6)].flatMap((e) =>
      e === undefined ? [] : [e]
    )
    for (const wrong of [repeated, lost, swapped]) {
      assert.isNotEmpty(verdict(whole, { first: watched(wrong) }, []))
    }
  })

  it("another ending, outcome count, reconnect or final state each fails", () => {
    const failure: Ending = { _tag: "Failed", tag: "ConnectionLost", text: "lost", fields: {} }
    assert.isNotEmpty(verdict(whole, { first: watched(script(3), failure) }, []))
    assert.isNotEmpty(verdict(whole, { first: watched(script(3), { _tag: "Complete", actions: 4 }) }, []))
    assert.isNotEmpty(verdict(whole, { first: { ...watched(script(3)), opens: [0, 1] } }, []))
    assert.isNotEmpty(verdict(whole, { first: { ...watched(script(3)), closed: "failed" } }, []))
  })

  it("action or step numbers other than expected (a repeat missing, one too many) fail", () => {
    const repeated = [...script(3).slice(0, 4), ...script(3).slice(2)]
    const expectation = {
      first: { ending: "Complete", actionNumbers: [1, 1, 2, 3], stepNumbers: [1, 1, 2, 3] },
      keyNeverInError: true
    }
    assert.deepStrictEqual(verdict(expectation, { first: watched(repeated) }, []), [])
    assert.isNotEmpty(verdict(expectation, { first: watched(script(3)) }, []))
    assert.isNotEmpty(verdict({ ...expectation, first: { ending: "Complete", stepNumbers: [1, 2, 3] } }, { first: watched(repeated) }, []))
  })

  it("unrecognized events other than expected (another name, one more, none) fail", () => {
    const expectation = { first: { ending: "Complete", unrecognized: ["mystery_event"] }, keyNeverInError: true }
    const withUnknown = (...names: ReadonlyArray<string>) =>
      watched([...script(3).slice(0, 2), ...names.map((text) => ({ tag: "Unrecognized", text })), ...script(3).slice(2)])
    assert.deepStrictEqual(verdict(expectation, { first: withUnknown("mystery_event") }, []), [])
    assert.isNotEmpty(verdict(expectation, { first: withUnknown("other_event") }, []))
    assert.isNotEmpty(verdict(expectation, { first: withUnknown("mystery_event", "mystery_event") }, []))
    assert.isNotEmpty(verdict(expectation, { first: withUnknown() }, []))
  })

  it("no reconnect for the reason expected fails", () => {
    const expectation = { first: { ending: "Complete", reconnectedFor: "idle time-out" }, keyNeverInError: true }
    const reconnected = (reconnectErrors?: ReadonlyArray<string>) => ({
      first: reconnectErrors === undefined ? watched(script(3)) : { ...watched(script(3)), reconnectErrors }
    })
    assert.deepStrictEqual(verdict(expectation, reconnected(["closed with code 1006", "no frame within the idle time-out"]), []), [])
    assert.isNotEmpty(verdict(expectation, reconnected(["closed with code 1006"]), []))
    assert.isNotEmpty(verdict(expectation, reconnected([]), []))
    assert.isNotEmpty(verdict(expectation, reconnected(), []), "not recorded")
  })

  it("a failure's field that does not contain the text expected fails", () => {
    const expectation = { first: { ending: "ConnectionLost", errorFieldsInclude: { lastError: "1011" } }, keyNeverInError: true }
    const lost = (lastError: string | number): Ending => ({ _tag: "Failed", tag: "ConnectionLost", text: "lost", fields: { lastError } })
    assert.deepStrictEqual(verdict(expectation, { first: watched([], lost("closed with code 1011")) }, []), [])
    assert.isNotEmpty(verdict(expectation, { first: watched([], lost("closed with code 1006")) }, []))
    assert.isNotEmpty(verdict(expectation, { first: watched([], lost(1011)) }, []))
  })

  it("a key in a failure's text fails, wherever it is", () => {
    const expectation = { first: { ending: "HandshakeRejected" }, keyNeverInError: true }
    const failure = (text: string): Ending => ({ _tag: "Failed", tag: "HandshakeRejected", text, fields: {} })
    assert.deepStrictEqual(verdict(expectation, { first: watched([], failure("refused: 401")) }, ["sk-secret"]), [])
    assert.isNotEmpty(verdict(expectation, { first: watched([], failure("refused ?apiKey=sk-secret")) }, ["sk-secret"]))
  })

  it("a second session, a fresh key per attempt or a Retry-After not waited out fails", () => {
    const http = { createStatuses: [429, 200], oneIdempotencyKey: true, sessionsCreated: 1, waitedAtLeastMs: 950 }
    const expectation = { first: { ending: "Complete" }, keyNeverInError: true, http }
    const create = (status: number, key: string, at: number, sessionId?: string) => ({
      method: "POST",
      path: "/api/v1/sessions",
      status,
      idempotencyKey: key,
      sessionId,
      startedAt: at,
      endedAt: at + 5
    })
    const good = [create(429, "k", 0), create(200, "k", 1005, "ses_1")]
    assert.deepStrictEqual(verdict(expectation, { first: watched(script(3)), http: good }, []), [])
    const cases = [
      [create(429, "k", 0, "ses_0"), create(200, "k", 1005, "ses_1")],
      [create(429, "k", 0), create(200, "other", 1005, "ses_1")],
      [create(429, "k", 0), create(200, "k", 100, "ses_1")],
      [create(200, "k", 0, "ses_1")]
    ]
    for (const http of cases) assert.isNotEmpty(verdict(expectation, { first: watched(script(3)), http }, []))
    assert.isNotEmpty(verdict(expectation, { first: watched(script(3)) }, []), "nothing recorded")
  })
})

describe("the conformance replay verdict (each check can fail)", () => {
  const completed: ReplayObservation = {
    events: [{ tag: "Started" }, { tag: "Unrecognized", text: "mystery_event", payload: "{\"odd\":1}" }, { tag: "Complete" }],
    ending: { _tag: "Complete", actions: 2 },
    response: "done",
    answers: [[true, "jane@example.com"]],
    connections: ["ses_recorded"],
    created: ["Find the opening hours"],
    canRetrieve: true
  }
  const whole = {
    ending: "Complete",
    events: [{ tag: "Started" }, { tag: "Unrecognized", text: "mystery_event", payload: "{\"odd\":1}" }, { tag: "Complete" }],
    response: "done",
    actions: 2,
    answers: [[true, "jane@example.com"]] as const,
    connections: ["ses_recorded"],
    created: ["Find the opening hours"],
    canRetrieve: true,
    keyNeverInError: true
  }

  it("a replay that did what was recorded passes; another event, outcome, answer, connection or create each fails", () => {
    assert.deepStrictEqual(replayVerdict(whole, completed, [testAccountKey]), [])
    const wrong: ReadonlyArray<ReplayObservation> = [
      { ...completed, ending: { _tag: "Failed", tag: "ReplayMismatch", text: "differs", fields: {} }, failedIn: "program" },
      { ...completed, failedIn: "program" },
      { ...completed, events: completed.events.slice(1) },
      { ...completed, events: [{ tag: "Started" }, { tag: "Unrecognized", text: "other_event", payload: "{\"odd\":1}" }, { tag: "Complete" }] },
      { ...completed, events: [{ tag: "Started" }, { tag: "Unrecognized", text: "mystery_event", payload: "{\"odd\":2}" }, { tag: "Complete" }] },
      { ...completed, events: [{ tag: "Started" }, { tag: "ActionRun", text: "mystery_event" }, { tag: "Complete" }] },
      { ...completed, response: "Mon-Fri 9-17" },
      { ...completed, ending: { _tag: "Complete", actions: 3 } },
      { ...completed, answers: [[false, null]] },
      { ...completed, answers: [] },
      { ...completed, connections: ["ses_recorded", "ses_recorded"] },
      { ...completed, created: [] },
      { ...completed, canRetrieve: false }
    ]
    for (const observed of wrong) assert.isNotEmpty(replayVerdict(whole, observed, [testAccountKey]), JSON.stringify(observed))
  })

  it("another failure, where it failed, a field that differs, lacks a text or ends otherwise, or the key in its text each fails", () => {
    const expectation = {
      ending: "ReplayMismatch",
      failedIn: "program" as const,
      errorFields: { subject: "create", line: 2 },
      errorFieldsInclude: { difference: ["goal: expected \"a\"", "got \"b <redacted>\""] },
      errorFieldsEndWith: { message: "recording.jsonl:2: the create differs" },
      keyNeverInError: true
    }
    const mismatch = (fields: Readonly<Record<string, string | number | boolean>>, text = "differs"): ReplayObservation => ({
      ...completed,
      failedIn: "program",
      ending: { _tag: "Failed", tag: "ReplayMismatch", text, fields }
    })
    const good = {
      subject: "create",
      line: 2,
      difference: "goal: expected \"a\", got \"b <redacted>\"",
      message: "/tmp/recording.jsonl:2: the create differs"
    }
    assert.deepStrictEqual(replayVerdict(expectation, mismatch(good), [testAccountKey]), [])
    const wrong: ReadonlyArray<ReplayObservation> = [
      { ...mismatch(good), ending: { _tag: "Failed", tag: "InvalidRecording", text: "bad", fields: good } },
      { ...mismatch(good), failedIn: "layer" },
      { ...completed, ending: mismatch(good).ending },
      mismatch({ ...good, subject: "answer" }),
      mismatch({ ...good, line: 3 }),
      mismatch({ subject: "create", line: 2, message: good.message }),
      mismatch({ ...good, difference: 7 }),
      mismatch({ ...good, message: "/tmp/recording.jsonl:2: the create differs (and more)" }),
      mismatch({ ...good, message: 2 }),
      mismatch({ ...good, difference: "goal: expected \"a\", got \"b test-account-key\"" }),
      mismatch(good, `the create differs: got "b ${testAccountKey}"`)
    ]
    for (const observed of wrong) assert.isNotEmpty(replayVerdict(expectation, observed, [testAccountKey]), JSON.stringify(observed))
  })
})
