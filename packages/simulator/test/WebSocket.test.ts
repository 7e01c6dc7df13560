import { assert, describe, it, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Dialect from "effect-agent-session/Dialect"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import { Simulator } from "../src/index.js"
import * as Wire from "effect-agent-session/Wire"
import {
  answerFrame,
  connectOnce,
  connectUntilDone,
  createSession,
  decodeAll,
  onboard,
  scriptedEvents,
  upgradeStatus
} from "./helpers.js"

const fast = { frameDelay: "1 millis", ask: "none" } as const

const tags = (events: ReadonlyArray<SessionEvent.SessionEvent>) => events.map((event) => event._tag)

describe("Simulator WebSocket: handshakes", () => {
  it.scopedLive("U08 message handshake: the whole script in order, each frame as Wire.encodeEvent writes it, close 1000", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { ...fast, actions: 3 } })
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      const script = yield* sim.script(sessionId)
      assert.strictEqual(run.code, 1000)
      assert.deepStrictEqual(run.frames, script.map((event) => Wire.encodeEvent(sim.dialect.framing, event)))
      assert.deepStrictEqual(tags(script), [
        "Started",
        "BrowserStarted",
        "ThoughtsAndMemories",
        "ActionRun",
        "ThoughtsAndMemories",
        "ActionRun",
        "ThoughtsAndMemories",
        "ActionRun",
        "Complete"
      ])
      const complete = script[script.length - 1]
      assert.isTrue(complete !== undefined && SessionEvent.isTerminal(complete))
      if (complete?._tag === "Complete") {
        assert.deepStrictEqual(complete.total_cost, Option.some(0.03))
        assert.strictEqual(complete.session_id, sessionId)
        assert.isTrue(Option.isNone(complete.cost_summary))
      }
      assert.strictEqual(yield* sim.connections(sessionId), 1)
    }))

  it.scopedLive("U08 query handshake (observed): connected first, heartbeats, complete with cost_summary", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        scenario: { frameDelay: "25 millis", ask: "none", actions: 3 },
        heartbeatInterval: "20 millis"
      })
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "query" })
      assert.strictEqual(run.code, 1000)
      const decoded = decodeAll(sim.dialect.framing, run.frames)
      assert.isTrue(decoded.every(Either.isRight))
      const first = decoded[0]
      assert.isTrue(first !== undefined && Either.isRight(first) && first.right._tag === "Connected")
      const heartbeats = decoded.filter((result) => Either.isRight(result) && result.right._tag === "Heartbeat")
      assert.isAbove(heartbeats.length, 0)
      const script = yield* sim.script(sessionId)
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, run.frames), script)
      const complete = script[script.length - 1]
      assert.strictEqual(complete?._tag, "Complete")
      if (complete?._tag === "Complete") {
        assert.deepStrictEqual(complete.cost_summary, Option.some({ total_cost: 0.03, actions: 3 }))
        assert.deepStrictEqual(SessionEvent.totalCost(complete), Option.some(0.03))
      }
    }))

  it.scopedLive("U08 a dialect with handshake both accepts the query or the first message", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.make({ name: "both", handshake: "both" }), scenario: fast })
      const byQuery = yield* createSession(sim)
      const byMessage = yield* createSession(sim)
      const runs = yield* Effect.all([
        connectOnce(sim, { sessionId: byQuery, apiKey: sim.accountKey, handshake: "query" }),
        connectOnce(sim, { sessionId: byMessage, apiKey: sim.accountKey, handshake: "message" })
      ], { concurrency: 2 })
      assert.deepStrictEqual(runs.map((run) => run.code), [1000, 1000])
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, runs[0]!.frames), yield* sim.script(byQuery))
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, runs[1]!.frames), yield* sim.script(byMessage))
    }))

  it.scopedLive("U12 an unknown session is refused: 404 before the upgrade (query), close 1008 (message)", () =>
    Effect.gen(function*() {
      const observed = yield* Simulator.make({ dialect: Dialect.observed })
      const refused = yield* connectOnce(observed, { sessionId: "ses_nope", apiKey: observed.accountKey, handshake: "query" })
      assert.strictEqual(upgradeStatus(refused), 404)
      const documented = yield* Simulator.make()
      const closed = yield* connectOnce(documented, {
        sessionId: "ses_nope",
        apiKey: documented.accountKey,
        handshake: "message"
      })
      assert.strictEqual(closed.code, 1008)
      assert.strictEqual(closed.reason, "unknown session")
      assert.deepStrictEqual(closed.frames, [])
    }))

  it.scopedLive("U11 an agent key cannot open another agent's session (403 / 1008); the account key opens any", () =>
    Effect.gen(function*() {
      for (const dialect of [Dialect.observed, Dialect.documented]) {
        const sim = yield* Simulator.make({ dialect, scenario: fast })
        const owner = yield* onboard(sim, "owner")
        const intruder = yield* onboard(sim, "intruder")
        const sessionId = yield* createSession(sim, { key: owner.apiKey })
        const handshake = dialect.handshake === "query" ? "query" : "message"
        const refused = yield* connectOnce(sim, { sessionId, apiKey: intruder.apiKey, handshake })
        if (handshake === "query") assert.strictEqual(upgradeStatus(refused), 403)
        else assert.strictEqual(refused.code, 1008)
        assert.deepStrictEqual(refused.frames, [])
        const own = yield* connectOnce(sim, { sessionId, apiKey: owner.apiKey, handshake })
        assert.strictEqual(own.code, 1000)
        const second = yield* createSession(sim, { key: owner.apiKey })
        const account = yield* connectOnce(sim, { sessionId: second, apiKey: sim.accountKey, handshake })
        assert.strictEqual(account.code, 1000)
        assert.strictEqual(yield* sim.connections(sessionId), 1)
      }
    }))

  it.scopedLive("U12 a wrong or missing key is refused: 401 before the upgrade, close 1008 after the message", () =>
    Effect.gen(function*() {
      const observed = yield* Simulator.make({ dialect: Dialect.observed })
      const sessionId = yield* createSession(observed)
      const wrong = yield* connectOnce(observed, { sessionId, apiKey: "wrong", handshake: "query" })
      assert.strictEqual(upgradeStatus(wrong), 401)
      // A documented client (handshake in the first message) gives no query: the key is missing.
      const documentedClient = yield* connectOnce(observed, { sessionId, apiKey: observed.accountKey, handshake: "message" })
      assert.strictEqual(upgradeStatus(documentedClient), 401)
      const documented = yield* Simulator.make()
      const other = yield* createSession(documented)
      const empty = yield* connectOnce(documented, { sessionId: other, apiKey: "", handshake: "message" })
      assert.strictEqual(empty.code, 1008)
      assert.strictEqual(yield* observed.connections(sessionId), 0)
      assert.strictEqual(yield* documented.connections(other), 0)
    }))

  it.scopedLive("U08 rejectHandshake refuses every handshake until cleared", () =>
    Effect.gen(function*() {
      const observed = yield* Simulator.make({ dialect: Dialect.observed, scenario: fast })
      const documented = yield* Simulator.make({ scenario: fast })
      const a = yield* createSession(observed)
      const b = yield* createSession(documented)
      yield* observed.setFaults({ ws: { rejectHandshake: true } })
      yield* documented.setFaults({ ws: { rejectHandshake: true } })
      const query = yield* connectOnce(observed, { sessionId: a, apiKey: observed.accountKey, handshake: "query" })
      assert.strictEqual(upgradeStatus(query), 401)
      const message = yield* connectOnce(documented, { sessionId: b, apiKey: documented.accountKey, handshake: "message" })
      assert.strictEqual(message.code, 1008)
      yield* documented.setFaults({})
      const accepted = yield* connectOnce(documented, { sessionId: b, apiKey: documented.accountKey, handshake: "message" })
      assert.strictEqual(accepted.code, 1000)
    }))

  it.scopedLive("an upgrade on another path is 404", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.make({ name: "elsewhere", connectPath: "/v2/connect" }) })
      const refused = yield* connectOnce(
        { ...sim, dialect: Dialect.documented },
        { sessionId: "ses_x", apiKey: sim.accountKey, handshake: "message" }
      )
      assert.strictEqual(upgradeStatus(refused), 404)
    }))
})

describe("Simulator WebSocket: resume and faults", () => {
  it.scopedLive("dropAfter drops abruptly (1006) after flushing; reconnecting resumes exactly once, in order", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { ...fast, actions: 4 }, faults: { ws: { dropAfter: [3, 7] } } })
      const sessionId = yield* createSession(sim)
      const runs = yield* connectUntilDone(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      assert.deepStrictEqual(runs.map((run) => run.code), [1006, 1006, 1000])
      assert.deepStrictEqual(runs.map((run) => run.frames.length), [3, 4, (yield* sim.script(sessionId)).length - 7])
      const received = runs.flatMap((run) => scriptedEvents(sim.dialect.framing, run.frames))
      assert.deepStrictEqual(received, yield* sim.script(sessionId))
      assert.strictEqual(yield* sim.connections(sessionId), 3)
    }))

  it.scopedLive("dropAfter in the observed dialect: connected on each connection, events exactly once", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        scenario: { ...fast, actions: 3 },
        faults: { ws: { dropAfter: [1, 2] } }
      })
      const sessionId = yield* createSession(sim)
      const runs = yield* connectUntilDone(sim, { sessionId, apiKey: sim.accountKey, handshake: "query" })
      assert.deepStrictEqual(runs.map((run) => run.code), [1006, 1006, 1000])
      for (const run of runs) assert.strictEqual(JSON.parse(run.frames[0]!).event, "connected")
      const received = runs.flatMap((run) => scriptedEvents(sim.dialect.framing, run.frames))
      assert.deepStrictEqual(received, yield* sim.script(sessionId))
    }))

  it.scopedLive("U09 U22 malformed, unknown and oversize frames are injected before the given events", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        scenario: { ...fast, actions: 3 },
        faults: { ws: { malformedAt: 2, unknownEventAt: 3, oversize: { at: 4, bytes: 1_100_000 } } }
      })
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      assert.strictEqual(run.code, 1000)
      const outcome = decodeAll(sim.dialect.framing, run.frames).map((result) =>
        Either.match(result, {
          onLeft: (tag) => tag,
          onRight: (event) => event._tag === "Unrecognized" ? `Unrecognized:${event.event}` : event._tag
        })
      )
      assert.deepStrictEqual(outcome.slice(0, 7), [
        "Started",
        "MalformedFrame",
        "BrowserStarted",
        "Unrecognized:mystery_event",
        "ThoughtsAndMemories",
        "FrameTooLarge",
        "ActionRun"
      ])
      assert.strictEqual(Buffer.byteLength(run.frames[5]!), 1_100_000)
      // The oversize frame is valid-shaped: it decodes under a larger limit.
      const big = Wire.decodeFrame(sim.dialect.framing, run.frames[5]!, { maxFrameSize: 2_000_000 })
      assert.isTrue(Either.isRight(big) && big.right._tag === "ThoughtsAndMemories")
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, run.frames).filter((e) => e._tag !== "Unrecognized"), yield* sim.script(sessionId))
    }))

  it.scopedLive("U16 the request waits for the answer; an answer after a reconnect unblocks it and is recorded", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { frameDelay: "1 millis", ask: "input", actions: 4 } })
      const sessionId = yield* createSession(sim)
      // First connection: leave as soon as the request arrives, without answering.
      const first = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onFrame: (frame, client) => {
          if (JSON.parse(frame).event === "external_resource_requested") client.close()
        }
      })
      const known = yield* sim.script(sessionId)
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, first.frames), known)
      const request = known[known.length - 1]
      assert.strictEqual(request?._tag, "ExternalResourceRequested")
      if (request?._tag === "ExternalResourceRequested") {
        assert.strictEqual(request.resource_type, "request_user_input")
        assert.deepStrictEqual(request.field_name, Option.some("email"))
      }
      assert.deepStrictEqual(yield* sim.answers(sessionId), [])
      // Reconnect and answer at once: the request is not sent again; the agent goes on.
      const answer = { granted: true, resource_type: "request_user_input", input: "jane@example.com" }
      const second = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onOpen: (client) => client.send(answerFrame("event", answer))
      })
      assert.strictEqual(second.code, 1000)
      const rest = scriptedEvents(sim.dialect.framing, second.frames)
      assert.deepStrictEqual(tags(rest).slice(0, 2), ["ExternalResourceGranted", "ThoughtsAndMemories"])
      const granted = rest[0]
      if (granted?._tag === "ExternalResourceGranted") {
        assert.isTrue(granted.granted)
        assert.deepStrictEqual(granted.input, Option.some("jane@example.com"))
      }
      const thought = rest[1]
      if (thought?._tag === "ThoughtsAndMemories") assert.include(thought.thought, "jane@example.com")
      assert.deepStrictEqual([...known, ...rest], yield* sim.script(sessionId))
      assert.deepStrictEqual(yield* sim.answers(sessionId), [answer])
    }))

  it.scopedLive("U16 observed answers framed with `type` are accepted; a denial is echoed", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ dialect: Dialect.observed, scenario: { frameDelay: "1 millis", actions: 2 } })
      const sessionId = yield* createSession(sim)
      const answer = { granted: false, resource_type: "admin_permission_request" }
      const run = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "query",
        onFrame: (frame, client) => {
          if (JSON.parse(frame).event === "external_resource_requested") client.send(answerFrame("type", answer))
        }
      })
      assert.strictEqual(run.code, 1000)
      const events = scriptedEvents(sim.dialect.framing, run.frames)
      assert.deepStrictEqual(events, yield* sim.script(sessionId))
      const granted = events.find(SessionEvent.$is("ExternalResourceGranted"))
      assert.isTrue(granted !== undefined && !granted.granted && Option.isNone(granted.input))
      assert.deepStrictEqual(yield* sim.answers(sessionId), [answer])
    }))

  it.scopedLive("U17 closeBeforeComplete closes with 1011 and never sends complete", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: fast, faults: { ws: { closeBeforeComplete: true } } })
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      assert.strictEqual(run.code, 1011)
      const events = scriptedEvents(sim.dialect.framing, run.frames)
      assert.isFalse(events.some(SessionEvent.isTerminal))
      assert.deepStrictEqual(events, yield* sim.script(sessionId))
      // A reconnect ends the same way.
      const again = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      assert.deepStrictEqual([again.code, again.frames.length], [1011, 0])
    }))

  it.scopedLive("U20 the agent runs min(actions, max_actions) actions; exceedMaxActions runs more", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { ...fast, actions: 5 } })
      const capped = yield* createSession(sim, { maxActions: 2 })
      const cappedScript = yield* sim.script(capped)
      assert.strictEqual(cappedScript.filter(SessionEvent.isChargeable).length, 2)
      // With the fault the agent runs max_actions + N, whatever it wanted.
      yield* sim.setScenario({ actions: 1 })
      yield* sim.setFaults({ ws: { exceedMaxActions: 2 } })
      const over = yield* createSession(sim, { maxActions: 2 })
      const run = yield* connectOnce(sim, { sessionId: over, apiKey: sim.accountKey, handshake: "message" })
      const events = scriptedEvents(sim.dialect.framing, run.frames)
      assert.strictEqual(events.filter(SessionEvent.isChargeable).length, 4)
      const complete = events.find(SessionEvent.isTerminal)
      assert.deepStrictEqual(complete?.total_cost, Option.some(0.04))
    }))

  it.scopedLive("stall pauses the frames once; every event still arrives once, in order", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({
        dialect: Dialect.observed,
        heartbeatInterval: "10 millis",
        scenario: { ...fast, actions: 2 },
        faults: { ws: { stall: { after: 3, duration: "150 millis" } } }
      })
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "query" })
      assert.strictEqual(run.code, 1000)
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, run.frames), yield* sim.script(sessionId))
      // No heartbeat between the 3rd and the 4th event: the channel is silent during the stall.
      const names = run.frames.map((frame) => String(JSON.parse(frame).event))
      const scripted = names.flatMap((name, i) => (name === "heartbeat" || name === "connected" ? [] : [i]))
      const between = names.slice(scripted[2]! + 1, scripted[3]!)
      assert.deepStrictEqual(between.filter((name) => name === "heartbeat"), [])
    }))

  it.scopedLive("bulkActions streams many frames under back-pressure, identical to Wire.encodeEvent, resumable", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { bulkActions: 5000 }, faults: { ws: { dropAfter: [2500] } } })
      const sessionId = yield* createSession(sim, { maxActions: 5000 })
      const runs = yield* connectUntilDone(sim, { sessionId, apiKey: sim.accountKey, handshake: "message" })
      assert.deepStrictEqual(runs.map((run) => run.code), [1006, 1000])
      const script = yield* sim.script(sessionId)
      assert.strictEqual(script.length, 5003)
      const frames = runs.flatMap((run) => run.frames)
      assert.strictEqual(frames.length, script.length)
      for (let i = 0; i < script.length; i++) {
        if (frames[i] !== Wire.encodeEvent(sim.dialect.framing, script[i]!)) {
          assert.fail(`frame ${i} differs: ${frames[i]}`)
        }
      }
      const complete = script[script.length - 1]
      assert.isTrue(complete !== undefined && SessionEvent.isTerminal(complete))
    }))
})

describe("Simulator WebSocket: connections", () => {
  it.scopedLive("a newer handshake supersedes the open connection (close 4000); the newer one resumes", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { frameDelay: "1 millis", ask: "permission", actions: 2 } })
      const sessionId = yield* createSession(sim)
      const waiting = yield* Deferred.make<void>()
      // The first connection stays open while the agent waits for the answer.
      const first = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onFrame: (frame) => {
          if (JSON.parse(frame).event === "external_resource_requested") Deferred.unsafeDone(waiting, Effect.void)
        }
      }).pipe(Effect.fork)
      yield* Deferred.await(waiting)
      const second = yield* connectOnce(sim, {
        sessionId,
        apiKey: sim.accountKey,
        handshake: "message",
        onOpen: (client) =>
          client.send(answerFrame("event", { granted: true, resource_type: "admin_permission_request" }))
      })
      const firstRun = yield* Fiber.join(first)
      assert.strictEqual(firstRun.code, 4000)
      assert.strictEqual(second.code, 1000)
      const received = [
        ...scriptedEvents(sim.dialect.framing, firstRun.frames),
        ...scriptedEvents(sim.dialect.framing, second.frames)
      ]
      assert.deepStrictEqual(received, yield* sim.script(sessionId))
      assert.strictEqual(yield* sim.connections(sessionId), 2)
    }))
})

layer(Simulator.layer({ dialect: Dialect.observed, scenario: { frameDelay: "1 millis", ask: "none" } }), {
  excludeTestServices: true
})("Simulator.layer", (it) => {
  it.effect("serves on a free port, reachable through the Simulator tag", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      assert.isAbove(sim.port, 0)
      assert.strictEqual(sim.baseUrl, `http://127.0.0.1:${sim.port}`)
      assert.strictEqual(sim.wsUrl, `ws://127.0.0.1:${sim.port}`)
      const sessionId = yield* createSession(sim)
      const run = yield* connectOnce(sim, { sessionId, apiKey: sim.accountKey, handshake: "query" })
      assert.strictEqual(run.code, 1000)
      assert.deepStrictEqual(scriptedEvents(sim.dialect.framing, run.frames), yield* sim.script(sessionId))
    }))
})
