/**
 * The hostile-peer suite, simulator half: a raw client (`net`, `http`, `ws`; never the SDK)
 * against the simulator running in a child process, so that a crash would be seen (the process
 * exits) and memory is measured where the state is held. Each case asserts a typed outcome (a
 * status with a `{ _tag, error }` body, or a close code), a time bound (every exchange has a
 * generous bound: a hang guard, not a timing), a memory bound where memory is the risk, and that
 * no key appears in a response or in the simulator's output.
 *
 * Issue 12, defects 1 to 6 (the simulator's), each with one or more cases below.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import {
  assertNoKey,
  assertRefusal,
  assertServes,
  auth,
  Child,
  childLayer,
  createSession,
  handshake,
  head,
  nested,
  nestedObject,
  onboard,
  postJson,
  rawExchange,
  request,
  type SimChild,
  writeSafely,
  wsConnect
} from "./sim-helpers.js"

const deepAnswer = (depth: number) => `{"event":"external_resource_granted","data":${nested(depth)}}`

const permission = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ event: "external_resource_granted", data: { granted: true, resource_type: "admin_permission_request", ...extra } })

/** Connects with the `message` handshake and runs `then` once the session's first frame arrives. */
const authenticated = (
  child: SimChild,
  sessionId: string,
  then: (send: (data: string | Buffer, binary?: boolean) => void) => void,
  key = child.accountKey
) => {
  let sent = false
  return wsConnect(child, {
    onOpen: (control) => control.send(handshake(key, sessionId)),
    onFrame: (_frame, control) => {
      if (!sent) {
        sent = true
        then(control.send)
      }
    }
  })
}

const createBody = (child: SimChild, goal: string) =>
  child.dialect.createSessionBody === "observed"
    ? { goal, url: "https://example.com/", max_actions: 5 }
    : { goal, start_url: "https://example.com/", max_actions: 5 }

const invalidTargets = ["http://x:99999/v1/connect", "http://[::1/x", "http://a%zz/x"]

layer(childLayer({ dialect: "documented", limits: { bodyTimeout: "1 second" } }), { excludeTestServices: true })(
  "hostile client: the simulator (documented dialect, message handshake)",
  (it) => {
    // -----------------------------------------------------------------------------------------
    // Defect 1: deep nesting crashed the process (RangeError formatting the ParseError)
    // -----------------------------------------------------------------------------------------
    it.effect("defect 1: a 3,000-deep answer frame as the first message is refused (close 1008); the process survives", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const outcome = yield* wsConnect(child, { onOpen: (control) => control.send(deepAnswer(3000)) })
        assert.isFalse(outcome.timedOut)
        assert.strictEqual(outcome.code, 1008)
        yield* assertServes(child)
      }))

    it.effect("defect 1: a deep handshake-shaped first message ({apiKey: [[[...]]]}) is close 1008", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const outcome = yield* wsConnect(child, {
          onOpen: (control) => control.send(`{"apiKey":${nested(3000)},"sessionId":${nestedObject(1500)}}`)
        })
        assert.isFalse(outcome.timedOut)
        assert.strictEqual(outcome.code, 1008)
        yield* assertServes(child)
      }))

    it.effect("defect 1: a 3,000-deep answer after authentication is close 1007 (malformed); the process survives", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const sessionId = yield* createSession(child)
        const outcome = yield* authenticated(child, sessionId, (send) => send(deepAnswer(3000)))
        assert.isFalse(outcome.timedOut)
        assert.strictEqual(outcome.code, 1007)
        assert.strictEqual(yield* child.answers(sessionId), 0)
        yield* assertServes(child)
      }))

    it.effect("defect 1: the deepest frame that fits the frame limit (8,000 levels) and a deep object are close 1007", () =>
      Effect.gen(function*() {
        const child = yield* Child
        for (const frame of [deepAnswer(8000), `{"event":"external_resource_granted","data":${nestedObject(2500)}}`]) {
          const sessionId = yield* createSession(child)
          const outcome = yield* authenticated(child, sessionId, (send) => send(frame))
          assert.isFalse(outcome.timedOut)
          assert.strictEqual(outcome.code, 1007)
        }
        yield* assertServes(child)
      }))

    it.effect("defect 5: a 3,000-deep goal is 400 with a {_tag, error} body (not an empty 500)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const text = JSON.stringify(createBody(child, "x")).replace("\"x\"", nested(3000))
        const answer = yield* postJson(child, child.dialect.sessionsPath, text)
        assertRefusal(answer, 400, "BadRequest")
        assertNoKey([child.accountKey], answer.text)
        yield* assertServes(child)
      }))

    it.effect("deep nesting at every HTTP entry point (create, unknown field, onboard, 3,000-deep objects) is 400", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const bodies: ReadonlyArray<readonly [string, string]> = [
          [child.dialect.sessionsPath, JSON.stringify(createBody(child, "go")).replace("}", `,"extra":${nested(3000)}}`)],
          [child.dialect.sessionsPath, JSON.stringify(createBody(child, "go")).replace("}", `,"extra":${nestedObject(3000)}}`)],
          [child.dialect.onboardPath, `{"name":${nested(3000)},"website":"https://example.com","domain":"x"}`],
          [child.dialect.sessionsPath, nested(20_000)],
          ["/no/such/route", nested(3000)]
        ]
        for (const [path, body] of bodies) {
          const answer = yield* postJson(child, path, body)
          assertRefusal(answer, 400, "BadRequest")
        }
        yield* assertServes(child)
      }))

    // -----------------------------------------------------------------------------------------
    // Defect 2: an invalid absolute-form target crashed onUpgrade (TypeError: Invalid URL)
    // -----------------------------------------------------------------------------------------
    it.effect("defect 2: an upgrade with an invalid absolute-form target is 400 with a body, and the socket is closed", () =>
      Effect.gen(function*() {
        const child = yield* Child
        for (const target of invalidTargets) {
          const response = yield* rawExchange(child.port, (socket) =>
            writeSafely(
              socket,
              head([
                `GET ${target} HTTP/1.1`,
                "Host: x",
                "Upgrade: websocket",
                "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version: 13"
              ])
            ))
          assert.isFalse(response.timedOut, target)
          assert.isTrue(response.closed, target)
          assertRefusal(response, 400, "BadRequest")
        }
        yield* assertServes(child)
      }))

    it.effect("defect 2: the same targets on plain requests (GET and POST) are 400 with a body", () =>
      Effect.gen(function*() {
        const child = yield* Child
        for (const target of invalidTargets) {
          for (const method of ["GET", "POST"]) {
            const response = yield* rawExchange(child.port, (socket) =>
              writeSafely(socket, head([`${method} ${target} HTTP/1.1`, "Host: x", "Content-Length: 0", "Connection: close"])))
            assert.isFalse(response.timedOut)
            assertRefusal(response, 400, "BadRequest")
          }
        }
        yield* assertServes(child)
      }))

    // -----------------------------------------------------------------------------------------
    // Defect 6: a chunked body over the limit was a connection reset
    // -----------------------------------------------------------------------------------------
    it.effect("defect 6: a chunked body of 2 MiB is 413 with a {_tag, error} body, not a reset", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const chunk = Buffer.alloc(64 * 1024, "a")
        const response = yield* rawExchange(child.port, (socket) => {
          writeSafely(
            socket,
            head([
              `POST ${child.dialect.sessionsPath} HTTP/1.1`,
              "Host: x",
              `Authorization: Bearer ${child.accountKey}`,
              "Content-Type: application/json",
              "Transfer-Encoding: chunked",
              "Connection: close"
            ])
          )
          for (let i = 0; i < 32; i++) writeSafely(socket, Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]))
          writeSafely(socket, "0\r\n\r\n")
        })
        assert.isFalse(response.timedOut)
        assert.isFalse(response.reset)
        assertRefusal(response, 413, "PayloadTooLarge")
        assertNoKey([child.accountKey], response.text)
        yield* assertServes(child)
      }))

    it.effect("defect 6: a declared 2 MiB body is 413 with a body; one over the drain bound (20 MiB) is 413 or closed, and the process survives", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const body = Buffer.alloc(2 * 1024 * 1024, "a")
        const declared = yield* rawExchange(child.port, (socket) => {
          writeSafely(
            socket,
            head([`POST ${child.dialect.sessionsPath} HTTP/1.1`, "Host: x", `Content-Length: ${body.length}`, "Connection: close"])
          )
          writeSafely(socket, body)
        })
        assert.isFalse(declared.timedOut)
        assertRefusal(declared, 413, "PayloadTooLarge")
        const huge = yield* rawExchange(child.port, (socket) => {
          writeSafely(
            socket,
            head([`POST ${child.dialect.sessionsPath} HTTP/1.1`, "Host: x", `Content-Length: ${20 * 1024 * 1024}`, "Connection: close"])
          )
          writeSafely(socket, body)
        })
        assert.isFalse(huge.timedOut)
        assert.isTrue(huge.closed)
        if (huge.status !== 0) assertRefusal(huge, 413, "PayloadTooLarge")
        yield* assertServes(child)
      }))

    it.effect("a body that stops arriving is 408 with a {_tag, error} body within the body time-out (1 s here)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const response = yield* rawExchange(child.port, (socket) => {
          writeSafely(
            socket,
            head([`POST ${child.dialect.sessionsPath} HTTP/1.1`, "Host: x", "Content-Length: 100", "Content-Type: application/json"])
          )
          writeSafely(socket, "{\"goal\":")
        })
        assert.isFalse(response.timedOut)
        assert.isTrue(response.closed)
        assertRefusal(response, 408, "RequestTimeout")
        yield* assertServes(child)
      }))

    it.effect("a body of invalid UTF-8 is 400; a WebSocket text frame of invalid UTF-8 is close 1007; binary garbage too", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const answer = yield* request(child.port, "POST", child.dialect.sessionsPath, {
          headers: { "content-type": "application/json", ...auth(child.dialect, child.accountKey) },
          body: Buffer.concat([Buffer.from("{\"goal\":\""), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from("\"}")])
        })
        assertRefusal(answer, 400, "BadRequest")
        assert.include(answer.text, "UTF-8")
        const sessionId = yield* createSession(child)
        const text = yield* authenticated(child, sessionId, (send) => send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), false))
        assert.strictEqual(text.code, 1007)
        const other = yield* createSession(child)
        const binary = yield* authenticated(child, other, (send) => send(Buffer.from([0x00, 0xff, 0x13, 0x37]), true))
        assert.strictEqual(binary.code, 1007)
        yield* assertServes(child)
      }))

    // -----------------------------------------------------------------------------------------
    // Defect 3: unbounded state
    // -----------------------------------------------------------------------------------------
    it.effect("defect 3: a socket that floods answers is closed (1008) after the limit; 4 answers are kept", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const sessionId = yield* createSession(child)
        const outcome = yield* authenticated(child, sessionId, (send) => {
          for (let i = 0; i < 200; i++) send(permission({ input: "x".repeat(4000) }))
        })
        assert.isFalse(outcome.timedOut)
        assert.strictEqual(outcome.code, 1008)
        assert.include(outcome.reason, "too many answers")
        assert.strictEqual(yield* child.answers(sessionId), 4)
        yield* assertServes(child)
      }))

    it.effect("defect 3: an answer field over 4,096 characters is close 1008; a frame over 16 KiB is close 1009", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const long = yield* createSession(child)
        const tooLong = yield* authenticated(child, long, (send) => send(permission({ input: "x".repeat(5000) })))
        assert.strictEqual(tooLong.code, 1008)
        assert.strictEqual(yield* child.answers(long), 0)
        const big = yield* createSession(child)
        const tooBig = yield* authenticated(child, big, (send) => send(permission({ input: "x".repeat(20_000) })))
        assert.strictEqual(tooBig.code, 1009)
        yield* assertServes(child)
      }))

    it.effect("defect 3: answers kept are bounded under a flood of sockets (memory bound: < 64 MiB growth)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const before = yield* child.memory
        const ids = yield* Effect.forEach(Array.from({ length: 40 }), () => createSession(child), { concurrency: 8 })
        yield* Effect.forEach(ids, (id) =>
          authenticated(child, id, (send) => {
            for (let i = 0; i < 50; i++) send(permission({ input: "y".repeat(4000) }))
          }), { concurrency: 8 })
        for (const id of ids) assert.isAtMost(yield* child.answers(id), 4)
        const after = yield* child.memory
        assert.isBelow(after.heapUsed - before.heapUsed, 64 * 1024 * 1024)
        yield* assertServes(child)
      }))

    it.effect("defect 3: a goal over 8,192 characters is 400; a body over 64 KiB is 413; both with a body", () =>
      Effect.gen(function*() {
        const child = yield* Child
        assertRefusal(yield* postJson(child, child.dialect.sessionsPath, createBody(child, "g".repeat(8193))), 400, "BadRequest")
        assertRefusal(yield* postJson(child, child.dialect.sessionsPath, createBody(child, "g".repeat(70_000))), 413, "PayloadTooLarge")
        const fits = yield* postJson(child, child.dialect.sessionsPath, createBody(child, "g".repeat(8192)))
        assert.strictEqual(fits.status, 200)
      }))

    // -----------------------------------------------------------------------------------------
    // Defect 4: another principal took over a session
    // -----------------------------------------------------------------------------------------
    it.effect("defect 4: an agent's key cannot open a session created with the account key (close 1008)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const agent = yield* onboard(child, "intruder-documented")
        const sessionId = yield* createSession(child)
        const intruder = yield* wsConnect(child, { onOpen: (control) => control.send(handshake(agent.apiKey, sessionId)) })
        assert.strictEqual(intruder.code, 1008)
        assert.deepStrictEqual(intruder.frames, [])
        assertNoKey([agent.apiKey, child.accountKey], intruder.reason)
      }))

    it.effect("defect 4: while the owner is connected, the account key is refused (1008) and the owner keeps its session; the owner itself supersedes (4000)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const agent = yield* onboard(child, "owner-documented")
        const sessionId = yield* createSession(child, agent.apiKey)
        // The owner connects and waits at the request, without answering yet.
        const ownerFrames: Array<string> = []
        let answerOwner: (() => void) | undefined
        let requested: (() => void) | undefined
        const requestSeen = new Promise<void>((resolve) => requested = resolve)
        const owner = yield* Effect.fork(wsConnect(child, {
          onOpen: (control) => control.send(handshake(agent.apiKey, sessionId)),
          onFrame: (frame, control) => {
            ownerFrames.push(frame)
            if (frame.includes("external_resource_requested")) {
              answerOwner = () => control.send(permission())
              requested?.()
            }
          }
        }))
        yield* Effect.promise(() => requestSeen)
        const account = yield* wsConnect(child, { onOpen: (control) => control.send(handshake(child.accountKey, sessionId)) })
        assert.strictEqual(account.code, 1008)
        assert.include(account.reason, "another principal")
        assert.deepStrictEqual(account.frames, [])
        // The owner still holds the session: its answer goes through and the session completes.
        answerOwner?.()
        const done = yield* Fiber.join(owner)
        assert.strictEqual(done.code, 1000)
        assert.isTrue(done.frames.some((frame) => frame.includes("\"complete\"")))

        // The same principal may supersede its own connection.
        const second = yield* createSession(child, agent.apiKey)
        let reconnected = false
        const first = yield* Effect.fork(wsConnect(child, {
          onOpen: (control) => control.send(handshake(agent.apiKey, second)),
          onFrame: () => {
            reconnected = true
          }
        }))
        while (!reconnected) yield* Effect.sleep("10 millis")
        const again = yield* Effect.fork(wsConnect(child, { onOpen: (control) => control.send(handshake(agent.apiKey, second)), timeoutMs: 2000 }))
        const superseded = yield* Fiber.join(first)
        assert.strictEqual(superseded.code, 4000)
        yield* Fiber.interrupt(again)
      }))

    it.effect("no key in the simulator's output after every hostile case; the process still runs", () =>
      Effect.gen(function*() {
        const child = yield* Child
        yield* assertServes(child)
        assertNoKey([child.accountKey], child.output())
      }))
  }
)

/** Reads an SSE stream over a raw connection until it ends or `timeoutMs`; the raw text. */
const sseRaw = (child: SimChild, sessionId: string, key: string, timeoutMs = 20_000) =>
  rawExchange(child.port, (socket) =>
    writeSafely(
      socket,
      head([
        `GET ${child.dialect.sse.connectPath}?sessionId=${encodeURIComponent(sessionId)}&apiKey=${encodeURIComponent(key)} HTTP/1.1`,
        "Host: x",
        "Connection: close"
      ])
    ), timeoutMs)

const egress = (child: SimChild, sessionId: string, key: string, body: string | Buffer) =>
  request(
    child.port,
    "POST",
    `${child.dialect.sse.egressPath}?sessionId=${encodeURIComponent(sessionId)}&apiKey=${encodeURIComponent(key)}`,
    { headers: { "content-type": "application/json" }, body }
  )

layer(childLayer({ dialect: "observed" }), { excludeTestServices: true })(
  "hostile client: the simulator (observed dialect: query handshake, SSE egress)",
  (it) => {
    it.effect("defect 1: a 3,000-deep answer through the SSE egress is 400 with a body; the process survives", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const sessionId = yield* createSession(child)
        for (const body of [deepAnswer(3000), `{"type":"external_resource_granted","data":${nestedObject(3000)}}`, nested(30_000)]) {
          const answer = yield* egress(child, sessionId, child.accountKey, body)
          assertRefusal(answer, 400, "BadRequest")
          assertNoKey([child.accountKey], answer.text)
        }
        assert.strictEqual(yield* child.answers(sessionId), 0)
        yield* assertServes(child)
      }))

    it.effect("defect 1: a 3,000-deep answer on a query-handshake socket is close 1007", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const sessionId = yield* createSession(child)
        const outcome = yield* wsConnect(child, {
          query: { sessionId, apiKey: child.accountKey },
          onOpen: (control) => control.send(deepAnswer(3000))
        })
        assert.strictEqual(outcome.code, 1007)
        yield* assertServes(child)
      }))

    it.effect("defect 2: an upgrade to an invalid absolute-form target with a query handshake is 400", () =>
      Effect.gen(function*() {
        const child = yield* Child
        for (const target of invalidTargets.map((t) => `${t}?sessionId=s&apiKey=${child.accountKey}`)) {
          const response = yield* rawExchange(child.port, (socket) =>
            writeSafely(
              socket,
              head([
                `GET ${target} HTTP/1.1`,
                "Host: x",
                "Upgrade: websocket",
                "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version: 13"
              ])
            ))
          assert.isTrue(response.closed)
          assertRefusal(response, 400, "BadRequest")
          assertNoKey([child.accountKey], response.body)
        }
        yield* assertServes(child)
      }))

    it.effect("defect 3: egress answers past the limit are 409 Conflict; oversized egress bodies 413; long fields 400", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const sessionId = yield* createSession(child)
        const statuses: Array<number> = []
        for (let i = 0; i < 6; i++) statuses.push((yield* egress(child, sessionId, child.accountKey, permission())).status)
        assert.deepStrictEqual(statuses, [202, 202, 202, 202, 409, 409])
        assertRefusal(yield* egress(child, sessionId, child.accountKey, permission()), 409, "Conflict")
        assert.strictEqual(yield* child.answers(sessionId), 4)
        const other = yield* createSession(child)
        assertRefusal(yield* egress(child, other, child.accountKey, permission({ input: "x".repeat(20_000) })), 413, "PayloadTooLarge")
        assertRefusal(yield* egress(child, other, child.accountKey, permission({ input: "x".repeat(5000) })), 400, "BadRequest")
        assertRefusal(yield* egress(child, other, child.accountKey, Buffer.from([0x7b, 0xff, 0x7d])), 400, "BadRequest")
        assert.strictEqual(yield* child.answers(other), 0)
      }))

    it.effect("defect 4: another agent's key is 403 on the upgrade, the SSE stream and the egress of an account session", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const agent = yield* onboard(child, "intruder-observed")
        const sessionId = yield* createSession(child)
        const ws = yield* wsConnect(child, { query: { sessionId, apiKey: agent.apiKey } })
        assert.strictEqual(ws.status, 403)
        assert.strictEqual(JSON.parse(ws.body)._tag, "Forbidden")
        const sse = yield* sseRaw(child, sessionId, agent.apiKey)
        assertRefusal(sse, 403, "Forbidden")
        assertRefusal(yield* egress(child, sessionId, agent.apiKey, permission()), 403, "Forbidden")
        assert.strictEqual(yield* child.answers(sessionId), 0)
        assertNoKey([agent.apiKey, child.accountKey], ws.body, sse.text)
      }))

    it.effect("defect 4: while the owner's WebSocket is open, the account key is 409 Conflict on the upgrade and on SSE", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const agent = yield* onboard(child, "owner-observed")
        const sessionId = yield* createSession(child, agent.apiKey)
        let requested: (() => void) | undefined
        const requestSeen = new Promise<void>((resolve) => requested = resolve)
        let answer: (() => void) | undefined
        const owner = yield* Effect.fork(wsConnect(child, {
          query: { sessionId, apiKey: agent.apiKey },
          onFrame: (frame, control) => {
            if (frame.includes("external_resource_requested")) {
              answer = () => control.send(JSON.stringify({ type: "external_resource_granted", data: { granted: true, resource_type: "admin_permission_request" } }))
              requested?.()
            }
          }
        }))
        yield* Effect.promise(() => requestSeen)
        const ws = yield* wsConnect(child, { query: { sessionId, apiKey: child.accountKey } })
        assert.strictEqual(ws.status, 409)
        assert.strictEqual(JSON.parse(ws.body)._tag, "Conflict")
        assertRefusal(yield* sseRaw(child, sessionId, child.accountKey), 409, "Conflict")
        answer?.()
        const done = yield* Fiber.join(owner)
        assert.strictEqual(done.code, 1000)
      }))

    it.effect("no key in the simulator's output; the process still runs", () =>
      Effect.gen(function*() {
        const child = yield* Child
        yield* assertServes(child)
        assertNoKey([child.accountKey], child.output())
      }))
  }
)

layer(
  childLayer({ dialect: "documented", ask: "permission", limits: { maxSessionsPerKey: 3, maxSessions: 5, maxAgents: 2 } }),
  { excludeTestServices: true }
)("hostile client: the simulator's session and agent limits", (it) => {
  it.effect("defect 3: past the sessions of a key, the oldest idle one is forgotten; when all are connected, 429 with a body", () =>
    Effect.gen(function*() {
      const child = yield* Child
      const ids = [yield* createSession(child), yield* createSession(child), yield* createSession(child)]
      // Hold a connection to each (they wait at the request).
      let open = 0
      const holders = yield* Effect.forEach(ids, (id) =>
        Effect.fork(wsConnect(child, {
          onOpen: (control) => control.send(handshake(child.accountKey, id)),
          onFrame: (frame) => {
            if (frame.includes("external_resource_requested")) open += 1
          },
          timeoutMs: 30_000
        })))
      while (open < 3) yield* Effect.sleep("10 millis")
      const refused = yield* postJson(child, child.dialect.sessionsPath, createBody(child, "one too many"))
      assertRefusal(refused, 429, "RateLimited")
      // One closes: its session is idle, so the next create forgets it.
      yield* Fiber.interrupt(holders[0]!)
      let created: string | undefined
      for (let attempt = 0; attempt < 100 && created === undefined; attempt++) {
        const answer = yield* postJson(child, child.dialect.sessionsPath, createBody(child, "room now"))
        if (answer.status === 200) created = String((answer.json as Record<string, unknown>)["session_id"])
        else yield* Effect.sleep("20 millis")
      }
      assert.isDefined(created)
      assert.deepStrictEqual(yield* child.script(ids[0]!), [])
      const forgotten = yield* wsConnect(child, { onOpen: (control) => control.send(handshake(child.accountKey, ids[0]!)) })
      assert.strictEqual(forgotten.code, 1008)
      yield* Effect.forEach(holders, Fiber.interrupt)
    }))

  it.effect("defect 3: onboarding past the agent limit is 403 with a body", () =>
    Effect.gen(function*() {
      const child = yield* Child
      yield* onboard(child, "agent-one")
      yield* onboard(child, "agent-two")
      const third = yield* postJson(child, child.dialect.onboardPath, { name: "agent-three", website: "https://example.com", domain: "research" })
      assertRefusal(third, 403, "Forbidden")
    }))
})

layer(childLayer({ dialect: "documented", limits: { maxSessionsPerKey: 50 } }), { excludeTestServices: true })(
  "hostile client: the simulator under a flood of sessions",
  (it) => {
    it.effect("defect 3: 600 sessions with 8 KiB goals keep the 50 newest (the oldest are forgotten); memory grows < 96 MiB", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const before = yield* child.memory
        const goal = (i: number) => `${i} ${"g".repeat(8180)}`
        const ids = yield* Effect.forEach(Array.from({ length: 600 }, (_, i) => i), (i) => createSession(child, child.accountKey, goal(i)), {
          concurrency: 8
        })
        const after = yield* child.memory
        assert.isBelow(after.rss - before.rss, 96 * 1024 * 1024)
        assert.deepStrictEqual(yield* child.script(ids[0]!), [])
        assert.isAbove((yield* child.script(ids[ids.length - 1]!)).length, 0)
        yield* assertServes(child)
      }), 120_000)
  }
)

layer(childLayer({ dialect: "documented" }), { excludeTestServices: true })(
  "hostile client: the simulator against broken HTTP and silent sockets",
  (it) => {
    it.effect("requests Node's parser refuses get a status with a {_tag, error} body too (400, 431), and the connection is closed", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const cases: ReadonlyArray<readonly [string, number]> = [
          ["GARBAGE\r\n\r\n", 400],
          [head(["GET / HTTP/1.1", "Host: x", "Bad\u0001Header: y"]), 400],
          [head(["POST /api/v1sessions HTTP/1.1", "Host: x", "Content-Length: 5", "Transfer-Encoding: chunked"]), 400],
          [head(["GET /v1/connect HTTP/1.1", "Host: x", `X-Padding: ${"p".repeat(20_000)}`]), 431],
          [head([`GET /v1/connect?apiKey=${child.accountKey}&pad=${"p".repeat(20_000)} HTTP/1.1`, "Host: x"]), 431]
        ]
        for (const [text, status] of cases) {
          const response = yield* rawExchange(child.port, (socket) => writeSafely(socket, Buffer.from(text, "latin1")))
          assert.isFalse(response.timedOut)
          assert.isTrue(response.closed)
          assert.strictEqual(response.status, status, response.text)
          const body = JSON.parse(response.body) as Record<string, unknown>
          assert.isString(body["_tag"])
          assert.isString(body["error"])
          assertNoKey([child.accountKey], response.text)
        }
        yield* assertServes(child)
      }))

    it.effect("a flood of 200 silent WebSockets is closed (1008) by the handshake time-out; the simulator serves meanwhile", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const before = yield* child.memory
        const silent = yield* Effect.forEach(Array.from({ length: 200 }), () => Effect.fork(wsConnect(child, { timeoutMs: 30_000 })), {
          concurrency: "unbounded"
        })
        yield* assertServes(child)
        const outcomes = yield* Effect.forEach(silent, Fiber.join)
        for (const outcome of outcomes) {
          assert.isFalse(outcome.timedOut)
          assert.strictEqual(outcome.code, 1008)
        }
        const after = yield* child.memory
        assert.isBelow(after.heapUsed - before.heapUsed, 32 * 1024 * 1024)
      }), 60_000)

    it.effect("a wrong key is refused without echoing it (401 over HTTP, 1008 on the socket)", () =>
      Effect.gen(function*() {
        const child = yield* Child
        const wrong = `${child.accountKey.slice(0, -1)}x`
        const answer = yield* postJson(child, child.dialect.sessionsPath, createBody(child, "go"), wrong)
        assertRefusal(answer, 401, "Unauthorized")
        const sessionId = yield* createSession(child)
        const ws = yield* wsConnect(child, { onOpen: (control) => control.send(handshake(wrong, sessionId)) })
        assert.strictEqual(ws.code, 1008)
        assertNoKey([wrong, child.accountKey], answer.text, JSON.stringify(answer.headers), ws.reason, child.output())
      }))
  }
)
