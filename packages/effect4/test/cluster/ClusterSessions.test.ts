/**
 * The Effect 4 cluster edition (`effect-agent-session-effect4/cluster`) on its embedded single
 * runner (in-memory message storage and log), against the simulator as a child process: a
 * session started through the façade runs to completion, its request answered
 * through the cluster; a second client follows the same log; a session created elsewhere is
 * attached; a session the log knows and no runner runs is taken over (by a subscriber, by
 * `Resume`); `respond`, `status`, `close` and an unknown session behave as the Effect 3 cluster
 * edition's (`packages/cluster/test/ClusterSessions.test.ts`).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as AgentApi from "../../src/AgentApi.js"
import * as Answer from "../../src/Answer.js"
import { ClusterErrors, ClusterSessions, EventLog, SessionEntity } from "../../cluster/src/index.js"
import * as Session from "../../src/Session.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import { sdkLayer, simLayer } from "../helpers/sdk.js"

const ClusterLive = ClusterSessions.layerEmbedded({ notFoundAfter: "2 seconds" }).pipe(
  Layer.provideMerge(sdkLayer("websocket")),
  Layer.provide(simLayer({ actions: 3, ask: "permission", frameDelay: 1 }))
)

const request = { start_url: "https://example.com", max_actions: 5, goal: "Find the opening hours" }

/** Follows a session's events to their end; answers each request with a grant when `answer`. */
const follow = (sessions: ClusterSessions.Service, sessionId: string, fromSeq = 1, answer = true) =>
  sessions.events(sessionId, fromSeq).pipe(
    Stream.tap((logged) =>
      answer && logged.event._tag === "ExternalResourceRequested"
        ? sessions.respond(sessionId, logged.event, Answer.grant())
        : Effect.void
    ),
    Stream.runCollect
  )

/** The session's first request, from its events. */
const firstRequest = (sessions: ClusterSessions.Service, sessionId: string) =>
  sessions.events(sessionId).pipe(
    Stream.filter((l) => l.event._tag === "ExternalResourceRequested"),
    Stream.map((l) => l.event as SessionEvent.ExternalResourceRequested),
    Stream.runHead,
    Effect.flatMap(Effect.fromOption)
  )

const tags = (events: ReadonlyArray<EventLog.LoggedEvent>) => events.map((l) => l.event._tag)

describe("ClusterSessions (Effect 4) on the embedded single runner", () => {
  layer(ClusterLive, { excludeTestServices: true, timeout: "90 seconds" })((it) => {
    it.effect("a started session runs on its entity to complete: seqs 1..n, its request answered, its outcome", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const seen = yield* follow(sessions, session.session_id)
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen[0]?.event._tag, "Started")
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual(tags(seen).filter((t) => t === "ActionRun").length, 3)
        assert.strictEqual(tags(seen).filter((t) => t === "ExternalResourceRequested").length, 1)
        assert.strictEqual(tags(seen).filter((t) => t === "ExternalResourceGranted").length, 1)
        assert.notInclude(tags(seen), "Heartbeat")
        const outcome = yield* sessions.outcome(session.session_id)
        assert.strictEqual(outcome.actions, 3)
        assert.strictEqual(outcome.maxActions, request.max_actions)
        const status = yield* sessions.status(session.session_id)
        assert.strictEqual(status.run, "complete")
        assert.strictEqual(status.lastSeq, seen.length)
        assert.deepStrictEqual(status.pending, [])
        assert.isTrue(Option.isSome(status.outcome))
      }))

    it.effect("a second client follows the same log, live and from any seq; its log replays then ends", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        // A second client of the same cluster: its own façade over the same `Sharding`.
        const second = yield* ClusterSessions.make({ notFoundAfter: "2 seconds" })
        const session = yield* sessions.start(request)
        const watcher = yield* Effect.forkChild(follow(second, session.session_id, 1, false))
        const answered = yield* follow(sessions, session.session_id)
        const watched = yield* Fiber.join(watcher)
        assert.deepStrictEqual(watched, answered)
        const tail = yield* follow(second, session.session_id, 3, false)
        assert.deepStrictEqual(tail, answered.slice(2))
      }))

    it.effect("a session created elsewhere is attached and runs; attach is keyed by the session (once)", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const api = yield* AgentApi.AgentApi
        const info = yield* api.createSession(request)
        yield* sessions.attach(info, request.max_actions)
        yield* sessions.attach(info, request.max_actions)
        const seen = yield* follow(sessions, info.session_id)
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(tags(seen).filter((t) => t === "Started").length, 1)
        assert.strictEqual((yield* sessions.outcome(info.session_id)).actions, 3)
      }))

    it.effect("respond: a pending request once (the same answer again is no error), another answer or an unknown request is RequestNotPending", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        const asked = yield* firstRequest(sessions, session.session_id)
        const waiting = yield* sessions.status(session.session_id)
        assert.strictEqual(waiting.run, "running")
        assert.deepStrictEqual(waiting.pending.map((r) => r.action_session_id), [asked.action_session_id])
        const unknown = yield* Effect.flip(
          sessions.respond(session.session_id, { ...asked, action_session_id: Session.ActionSessionId.make("never-asked") }, Answer.grant())
        )
        assert.strictEqual(unknown._tag, "RequestNotPending")
        assert.strictEqual(unknown._tag === "RequestNotPending" ? unknown.reason : "", "never-received")
        yield* sessions.respond(session.session_id, asked, Answer.grant("yes"))
        yield* sessions.respond(session.session_id, asked, Answer.grant("yes"))
        const other = yield* Effect.flip(sessions.respond(session.session_id, asked, Answer.deny()))
        assert.strictEqual(other._tag, "RequestNotPending")
        assert.strictEqual(other._tag === "RequestNotPending" ? other.reason : "", "already-answered")
        const outcome = yield* sessions.outcome(session.session_id)
        assert.strictEqual(outcome.actions, 3)
      }))

    it.effect("close ends a running session's run (closed); its outcome is SessionEndedWithoutComplete", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const session = yield* sessions.start(request)
        yield* firstRequest(sessions, session.session_id)
        const closed = yield* sessions.close(session.session_id)
        assert.strictEqual(closed.run, "closed")
        assert.deepStrictEqual(closed.endReason, Option.some("closed by a caller"))
        const error = yield* Effect.flip(sessions.outcome(session.session_id))
        assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
        // The log ends: a follower gets what was logged, then the stream ends.
        const seen = yield* follow(sessions, session.session_id, 1, false)
        assert.strictEqual(seen.at(-1)?.event._tag, "ExternalResourceRequested")
      }))

    it.effect("an unknown session: status unknown, events and outcome SessionNotFound; an unusable id at once", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const status = yield* sessions.status("no-such-session")
        assert.strictEqual(status.run, "unknown")
        const events = yield* Effect.flip(Stream.runDrain(sessions.events("no-such-session")))
        assert.strictEqual(events._tag, "SessionNotFound")
        assert.isTrue(ClusterErrors.isClusterError(events))
        const outcome = yield* Effect.flip(sessions.outcome("no-such-session"))
        assert.strictEqual(outcome._tag, "SessionNotFound")
        const unusable = yield* Effect.flip(sessions.status(" padded "))
        assert.strictEqual(unusable._tag, "SessionNotFound")
      }))

    it.effect("a session the log knows and no runner runs is taken over by its first subscriber: every event once", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const api = yield* AgentApi.AgentApi
        const log = yield* EventLog.EventLog
        const info = yield* api.createSession(request)
        // Registered as another runner would have done before it died: no `Start` reaches it here.
        yield* log.register({ info, maxActions: request.max_actions, agent: Option.none() })
        const seen = yield* follow(sessions, info.session_id)
        assert.deepStrictEqual(seen.map((l) => l.seq), seen.map((_, i) => i + 1))
        assert.strictEqual(seen[0]?.event._tag, "Started")
        assert.strictEqual(seen.at(-1)?.event._tag, "Complete")
        assert.strictEqual((yield* sessions.status(info.session_id)).run, "complete")
      }))

    it.effect("Resume runs a session the log knows and no runner runs, and replies once its channel is open", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const api = yield* AgentApi.AgentApi
        const log = yield* EventLog.EventLog
        const makeClient = yield* SessionEntity.SessionEntity.client
        const info = yield* api.createSession(request)
        yield* log.register({ info, maxActions: request.max_actions, agent: Option.none() })
        const resumed = yield* makeClient(info.session_id).Resume()
        assert.strictEqual(resumed.run, "running")
        assert.isTrue(Option.isSome(resumed.runner), "it runs on this runner")
        assert.deepStrictEqual(resumed.connection, Option.some("Open"))
        const seen = yield* follow(sessions, info.session_id)
        const status = yield* sessions.status(info.session_id)
        assert.strictEqual(status.run, "complete")
        assert.strictEqual(status.lastSeq, seen.length)
        assert.strictEqual(tags(seen).filter((t) => t === "Started").length, 1)
        // Resume of a session whose run ended: its status, nothing run again.
        const again = yield* makeClient(info.session_id).Resume()
        assert.strictEqual(again.lastSeq, seen.length)
      }))

    it.effect("a session closed before its Start reached it is not run: Start replies closed", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const api = yield* AgentApi.AgentApi
        const info = yield* api.createSession(request)
        const closed = yield* sessions.close(info.session_id)
        assert.strictEqual(closed.run, "closed")
        yield* sessions.attach(info, request.max_actions)
        const status = yield* sessions.status(info.session_id)
        assert.strictEqual(status.run, "closed")
        assert.strictEqual(status.lastSeq, 0)
        const error = yield* Effect.flip(sessions.outcome(info.session_id))
        assert.strictEqual(error._tag, "SessionEndedWithoutComplete")
      }))

    it.effect("the log holds the session's events without channel notices, and its record", () =>
      Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const log = yield* EventLog.EventLog
        const session = yield* sessions.start(request)
        const seen = yield* follow(sessions, session.session_id)
        const stored = yield* log.read(session.session_id, 1, 1_000)
        assert.deepStrictEqual(stored, seen)
        const record = yield* log.get(session.session_id)
        assert.deepStrictEqual(
          Option.map(record, (r) => Option.map(r.ended, (e) => e.status)),
          Option.some(Option.some("complete" as const))
        )
        const client = yield* SessionEntity.SessionEntity.client
        const direct = yield* client(session.session_id).Status()
        assert.strictEqual(direct.lastSeq, seen.length)
      }))
  })
})
