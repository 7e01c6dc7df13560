/**
 * The simulator's replay over real sockets (issue 23): the SDK's own client against a recording
 * served on port 0, over WebSocket and SSE; answers and create requests checked; recorded
 * refusals, close codes and reconnects served again; `speed`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { WebSocket } from "ws"
import { AgentApi, AgentSessions, Answer, Dialect, NodeAgentSessions } from "effect-agent-session"
import { Replay } from "../src/index.js"
import { answerData, header, request, session, sessionId, writeRecording } from "effect-agent-session-conformance/recordings"

const sdk = (replay: Replay.Service, transport: "websocket" | "sse" = "websocket") =>
  NodeAgentSessions.layer({
    apiKey: replay.accountKey,
    baseUrl: replay.baseUrl,
    dialect: replay.dialect,
    transport,
    events: { connectTimeout: "3 seconds" }
  })

const runApp = (answer: Answer.Answer = Answer.grant("jane@example.com"), create = request) =>
  AgentSessions.run(create, { onRequest: () => Effect.succeed(answer), keepEvents: true })

const tags = (outcome: AgentSessions.Outcome) => outcome.events.map((event) => event._tag)

const expectedTags = ["Started", "ActionRun", "ExternalResourceRequested", "ExternalResourceGranted", "ActionRun", "Complete"]

describe("simulator Replay", () => {
  for (const transport of ["websocket", "sse"] as const) {
    it.live(`serves a recorded WebSocket session over ${transport}: same events, the drop and reconnect included`, () =>
      Effect.gen(function*() {
        const replay = yield* Replay.make({ path: writeRecording(session()), speed: Infinity })
        const outcome = yield* runApp().pipe(Effect.provide(sdk(replay, transport)))
        assert.deepStrictEqual(tags(outcome), expectedTags)
        assert.strictEqual(outcome.response, "Mon-Fri 9-17")
        const report = yield* replay.result
        assert.deepStrictEqual(report, { sessionId, connections: 2, frames: 6, answers: 1 })
      }).pipe(Effect.scoped))

    it.live(`an answer that differs (${transport}): the client is refused with the difference, the run fails with ReplayMismatch`, () =>
      Effect.gen(function*() {
        const replay = yield* Replay.make({ path: writeRecording(session()), speed: Infinity })
        const error = yield* Effect.flip(runApp(Answer.deny()).pipe(Effect.provide(sdk(replay, transport))))
        assert.strictEqual(error._tag, "HandshakeRejected")
        assert.include(error.message, "replay: The answer differs from the recording")
        const failure = yield* Effect.flip(replay.result)
        assert.strictEqual(failure._tag, "ReplayMismatch")
        if (failure._tag !== "ReplayMismatch") return
        assert.strictEqual(failure.subject, "answer")
        assert.strictEqual(failure.line, 12)
        assert.include(failure.difference, "granted: expected true, got false")
      }).pipe(Effect.scoped))
  }

  it.live("no answer within answerTimeout fails the run with ReplayMismatch", () =>
    Effect.gen(function*() {
      const replay = yield* Replay.make({ path: writeRecording(session()), speed: Infinity, answerTimeout: "200 millis" })
      const error = yield* Effect.flip(
        Effect.scoped(Effect.flatMap(AgentSessions.start(request), (running) => running.outcome)).pipe(
          Effect.provide(sdk(replay))
        )
      )
      assert.strictEqual(error._tag, "HandshakeRejected")
      const failure = yield* Effect.flip(replay.result)
      assert.strictEqual(failure._tag, "ReplayMismatch")
      if (failure._tag === "ReplayMismatch") assert.include(failure.actual, "no answer within 200ms")
    }).pipe(Effect.scoped))

  it.live("a create request that differs is a 400 whose message shows the difference", () =>
    Effect.gen(function*() {
      const replay = yield* Replay.make({ path: writeRecording(session()), speed: Infinity })
      const error = yield* Effect.flip(runApp(Answer.grant(), { ...request, max_actions: 9 }).pipe(Effect.provide(sdk(replay))))
      assert.strictEqual(error._tag, "BadRequest")
      assert.include(error.message, "max_actions: expected 3, got 9")
      const failure = yield* Effect.flip(replay.result)
      assert.strictEqual(failure._tag === "ReplayMismatch" && failure.subject, "create")
    }).pipe(Effect.scoped))

  it.live("each create replays the session again", () =>
    Effect.gen(function*() {
      const replay = yield* Replay.make({ path: writeRecording(session({ drop: false })), speed: Infinity })
      const first = yield* runApp().pipe(Effect.provide(sdk(replay)))
      const second = yield* runApp().pipe(Effect.provide(sdk(replay)))
      assert.deepStrictEqual(tags(first), tags(second))
      assert.strictEqual(yield* replay.runs, 2)
      assert.strictEqual((yield* replay.result).answers, 1)
    }).pipe(Effect.scoped))

  for (const [dialect, refusal] of [[Dialect.observed, 401], [Dialect.documented, 1008]] as const) {
    it.live(`recorded ends are served again (${dialect.name}): a 503 at the upgrade, a close 1011, a refused key (${refusal})`, () =>
      Effect.gen(function*() {
        const frame = (t: number, conn: number, event: string, data: unknown) => ({ type: "frame", t, conn, text: JSON.stringify({ event, data }) })
        const path = writeRecording([
          header({ dialect }),
          { type: "create", t: 0, request },
          { type: "created", t: 1, session: { session_id: sessionId } },
          { type: "connect", t: 2, conn: 1 },
          { type: "close", t: 3, conn: 1, opened: false, outcome: { _tag: "Retry", cause: "upgrade refused with HTTP 503" } },
          { type: "connect", t: 300, conn: 2 },
          { type: "open", t: 301, conn: 2 },
          frame(302, 2, "started", { sessionId, start_url: request.start_url }),
          { type: "close", t: 303, conn: 2, opened: true, outcome: { _tag: "Retry", cause: "closed with code 1011: server restart" } },
          { type: "connect", t: 600, conn: 3 },
          { type: "close", t: 601, conn: 3, opened: false, outcome: { _tag: "Fatal", reason: "handshake-rejected", error: { _tag: "HandshakeRejected", code: 401, reason: "invalid API key" } } },
          { type: "end", t: 602, reason: "handshake-rejected" }
        ])
        const replay = yield* Replay.make({ path, speed: Infinity })
        const seen: Array<string> = []
        const error = yield* Effect.flip(
          AgentSessions.run(request, { onEvent: (event) => Effect.sync(() => void seen.push(event._tag)) }).pipe(
            Effect.provide(sdk(replay))
          )
        )
        // With the query handshake a refusal is the recorded HTTP status at the upgrade; with the
        // message handshake the socket is open before the key is checked: a close (1008).
        assert.strictEqual(error._tag, "HandshakeRejected")
        if (error._tag === "HandshakeRejected") assert.strictEqual(error.code, refusal)
        assert.deepStrictEqual(seen, ["Started"])
        assert.deepStrictEqual(yield* replay.result, { sessionId, connections: 3, frames: 1, answers: 0 })
      }).pipe(Effect.scoped))
  }

  it.live("speed divides the recorded delays: a 30 s recording served at 1000x", () =>
    Effect.gen(function*() {
      const replay = yield* Replay.make({ path: writeRecording(session({ drop: false })), speed: 1000 })
      const outcome = yield* runApp().pipe(Effect.provide(sdk(replay)))
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
    }).pipe(Effect.scoped))

  it.live("a recording in the observed dialect is served in it (query handshake, x-api-key)", () =>
    Effect.gen(function*() {
      const observed = session({ answer: answerData }).map((line, i) => (i === 0 ? header({ dialect: Dialect.observed }) : line))
      const replay = yield* Replay.make({ path: writeRecording(observed), speed: Infinity, accountKey: "replay-key" })
      assert.strictEqual(replay.dialect.name, "observed")
      const outcome = yield* runApp().pipe(Effect.provide(sdk(replay)))
      assert.deepStrictEqual(tags(outcome), expectedTags)
      // The wrong key is refused as the service would.
      const refused = yield* Effect.flip(
        runApp().pipe(Effect.provide(NodeAgentSessions.layer({ apiKey: "wrong", baseUrl: replay.baseUrl, dialect: Dialect.observed })))
      )
      assert.strictEqual(refused._tag, "Unauthorized")
    }).pipe(Effect.scoped))

  it.live("a handshake with the wrong key is refused (1008) and uses none of the recording", () =>
    Effect.gen(function*() {
      const replay = yield* Replay.make({ path: writeRecording(session()), speed: Infinity })
      const outcome = yield* Effect.gen(function*() {
        const api = yield* AgentApi.AgentApi
        const created = yield* api.createSession(request)
        // A stranger opens the channel first, with the wrong key.
        const code = yield* Effect.async<number>((resume) => {
          const ws = new WebSocket(`${replay.wsUrl}/v1/connect`)
          ws.on("open", () => ws.send(JSON.stringify({ apiKey: "wrong", sessionId: created.session_id })))
          ws.on("close", (closed) => resume(Effect.succeed(closed)))
        })
        assert.strictEqual(code, 1008)
        return yield* Effect.scoped(Effect.flatMap(AgentSessions.attach(created, 3), (running) =>
          Effect.zipRight(
            Stream.runForEach(
              Stream.filter(running.events, (event) => event._tag === "ExternalResourceRequested"),
              (event) => event._tag === "ExternalResourceRequested" ? running.respond(event, Answer.grant("jane@example.com")) : Effect.void
            ),
            running.outcome
          )))
      }).pipe(Effect.provide(sdk(replay)))
      assert.strictEqual(outcome.response, "Mon-Fri 9-17")
      assert.strictEqual((yield* replay.result).connections, 2)
    }).pipe(Effect.scoped))

  it.live("a damaged line met while serving fails the run with InvalidRecording naming it; the client is refused", () =>
    Effect.gen(function*() {
      const damaged = session({ drop: false }).map((line, i) => (i === 6 ? "{\"type\":\"frame\",\"t\":" : line))
      const replay = yield* Replay.make({ path: writeRecording(damaged), speed: Infinity })
      const error = yield* Effect.flip(runApp().pipe(Effect.provide(sdk(replay))))
      assert.strictEqual(error._tag, "HandshakeRejected")
      const failure = yield* Effect.flip(replay.result)
      assert.strictEqual(failure._tag, "InvalidRecording")
      if (failure._tag === "InvalidRecording") {
        assert.strictEqual(failure.line, 7)
        assert.strictEqual(failure.reason, "not JSON")
      }
    }).pipe(Effect.scoped))

  it.live("a file that is not a recording fails make with InvalidRecording", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Replay.make({ path: writeRecording([{ har: { log: {} } }]) }))
      assert.strictEqual(error._tag, "InvalidRecording")
      if (error._tag === "InvalidRecording") assert.strictEqual(error.line, 1)
    }).pipe(Effect.scoped))

  describe("a recording is input: a hostile line fails its run with InvalidRecording; the server stays up (issue 36)", () => {
    /** The server still answers: a request to a route it does not serve gets its 404. */
    const stillUp = (replay: Replay.Service) =>
      Effect.promise(() => fetch(`${replay.baseUrl}/nothing-here`).then((response) => response.status))

    const expectInvalid = (replay: Replay.Service, line: number, reason: string) =>
      Effect.gen(function*() {
        const failure = yield* Effect.flip(replay.result)
        assert.strictEqual(failure._tag, "InvalidRecording")
        if (failure._tag !== "InvalidRecording") return
        assert.strictEqual(failure.line, line)
        assert.include(failure.reason, reason)
        assert.strictEqual(yield* stillUp(replay), 404)
      })

    it.live("a recorded create status Node cannot write (1000)", () =>
      Effect.gen(function*() {
        const replay = yield* Replay.make({
          path: writeRecording([
            header(),
            { type: "create", t: 0, request },
            { type: "create-failed", t: 1, error: { _tag: "UnexpectedStatus", status: 1000, body: "{}" } }
          ]),
          speed: Infinity
        })
        const error = yield* Effect.flip(runApp().pipe(Effect.provide(sdk(replay)), Effect.timeout("10 seconds")))
        // A 500 (retried, then unknown): no status the client cannot read.
        assert.include(["ServerError", "OutcomeUnknown"], error._tag)
        yield* expectInvalid(replay, 3, "\"status\" of the error is not a final HTTP status")
      }).pipe(Effect.scoped))

    it.live("a recorded close code that cannot be sent (999): the connection is closed, not left hanging", () =>
      Effect.gen(function*() {
        const lines = session({ drop: false }).map((line, i) =>
          i === 6 ? { type: "close", t: 80, conn: 1, opened: true, outcome: { _tag: "Retry", cause: "closed with code 999" } } : line
        )
        const replay = yield* Replay.make({ path: writeRecording(lines), speed: Infinity })
        const error = yield* Effect.flip(runApp().pipe(Effect.provide(sdk(replay)), Effect.timeout("5 seconds")))
        assert.strictEqual(error._tag, "HandshakeRejected")
        yield* expectInvalid(replay, 7, "close code 999 cannot be sent")
      }).pipe(Effect.scoped))

    it.live("53 bytes claiming a frame of 400,000,000 bytes: refused, nothing of that size built", () =>
      Effect.gen(function*() {
        const claim = "{\"type\":\"too-large\",\"t\":80,\"conn\":1,\"size\":400000000}"
        assert.strictEqual(claim.length, 53)
        const lines = session({ drop: false }).map((line, i) => (i === 6 ? claim : line))
        const replay = yield* Replay.make({ path: writeRecording(lines), speed: Infinity })
        const before = process.memoryUsage().rss
        const error = yield* Effect.flip(runApp().pipe(Effect.provide(sdk(replay)), Effect.timeout("5 seconds")))
        assert.strictEqual(error._tag, "HandshakeRejected")
        assert.isBelow(process.memoryUsage().rss - before, 200 * 1024 * 1024)
        yield* expectInvalid(replay, 7, "too-large: \"size\"")
      }).pipe(Effect.scoped))
  })

  describe("what the recording does not hold (issue 36)", () => {
    const requested = (t: number, actionSessionId: string, fieldName: string) => ({
      type: "frame",
      t,
      conn: 1,
      text: JSON.stringify({
        event: "external_resource_requested",
        data: { resource_type: "request_user_input", reason: "needed", action_session_id: actionSessionId, field_name: fieldName }
      })
    })
    const frameOf = (t: number, event: string, data: unknown) => ({ type: "frame", t, conn: 1, text: JSON.stringify({ event, data }) })
    const complete = (t: number) => frameOf(t, "complete", { response: "done", type: "STRING", total_cost: 0.01, session_id: sessionId })
    const ending = (t: number) => [
      { type: "close", t, conn: 1, opened: true, outcome: { _tag: "End", reason: "complete" } },
      { type: "end", t: t + 1, reason: "complete" }
    ]
    const connection = [
      { type: "connect", t: 50, conn: 1 },
      { type: "open", t: 60, conn: 1 },
      frameOf(70, "started", { sessionId, start_url: request.start_url })
    ]
    const opening = [
      { type: "create", t: 0, request },
      { type: "created", t: 40, session: { session_id: sessionId } },
      ...connection
    ]

    it.live("an answer to a request the recording never answered: the run fails with ReplayMismatch", () =>
      Effect.gen(function*() {
        const replay = yield* Replay.make({
          path: writeRecording([
            header(),
            ...opening,
            requested(100, "as_payment", "email"),
            frameOf(3_000, "action_run", { name: "wait", action_session_id: "as_payment", content: "" }),
            complete(3_100),
            ...ending(3_110)
          ]),
          speed: 10
        })
        yield* Effect.exit(runApp().pipe(Effect.provide(sdk(replay)), Effect.timeout("10 seconds")))
        const failure = yield* Effect.flip(replay.result)
        assert.strictEqual(failure._tag, "ReplayMismatch")
        if (failure._tag !== "ReplayMismatch") return
        assert.strictEqual(failure.subject, "answer")
        assert.strictEqual(failure.line, 10)
        assert.include(failure.difference, "the recording never answered that request")
      }).pipe(Effect.scoped))

    it.live("two requests pending at once: the answers are compared with the recorded ones in order", () =>
      Effect.gen(function*() {
        const answerTo = (actionSessionId: string, fieldName: string, input: string) => ({
          granted: true,
          resource_type: "request_user_input",
          action_session_id: actionSessionId,
          field_name: fieldName,
          input
        })
        const replay = yield* Replay.make({
          path: writeRecording([
            header(),
            ...opening,
            requested(100, "as_1", "email"),
            requested(110, "as_2", "phone"),
            { type: "answer", t: 1_000, conn: 1, data: answerTo("as_1", "email", "jane@example.com"), result: "written" },
            { type: "answer", t: 1_010, conn: 1, data: answerTo("as_2", "phone", "+1 555 0100"), result: "written" },
            complete(1_100),
            ...ending(1_110)
          ]),
          speed: 10
        })
        const outcome = yield* AgentSessions.run(request, {
          onRequest: (event) => Effect.succeed(Answer.grant(Option.getOrUndefined(event.field_name) === "phone" ? "+1 555 0100" : "jane@example.com"))
        }).pipe(Effect.provide(sdk(replay)))
        assert.strictEqual(outcome.response, "done")
        assert.deepStrictEqual(yield* replay.result, { sessionId, connections: 1, frames: 4, answers: 2 })
      }).pipe(Effect.scoped))

    it.live("a create against a recording of attach (no create): refused, the run fails with the in-memory replay's ReplayMismatch", () =>
      Effect.gen(function*() {
        const replay = yield* Replay.make({
          path: writeRecording([header(), ...connection, complete(100), ...ending(110)]),
          speed: Infinity
        })
        const error = yield* Effect.flip(runApp(Answer.grant(), { ...request, goal: "Anything at all" }).pipe(Effect.provide(sdk(replay))))
        assert.strictEqual(error._tag, "NotFound")
        const failure = yield* Effect.flip(replay.result)
        assert.strictEqual(failure._tag, "ReplayMismatch")
        if (failure._tag !== "ReplayMismatch") return
        assert.deepInclude(failure, {
          subject: "create",
          line: 2,
          expected: "an attach (the recording has no create)",
          actual: "a create request",
          difference: "expected an attach (the recording has no create), got a create request"
        })
      }).pipe(Effect.scoped))
  })
})
