/**
 * Security, end to end.
 *
 * In the SDK: the keys (account, agent, and a wrong one) never appear in anything the SDK writes
 * (every log line at `LogLevel.All` through a capturing logger, every span, span attribute and
 * span event of an in-memory tracer, every error's message, `String`, `JSON.stringify` and
 * `Cause.pretty`) over whole runs that include retries, reconnects, skipped frames and failures,
 * in both dialects; in the documented dialect no address carries a key either. Plain `ws://` /
 * `http://` to a host that is not loopback is refused (`InsecureTransport`) unless opted in.
 *
 * In the simulator (the reference users run): an agent's key cannot open another agent's
 * session; unknown session ids are refused; keys are compared in constant time; request bodies
 * over the limit are refused with 413.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Crypto from "node:crypto"
import { syncBuiltinESMExports } from "node:module"
import * as Os from "node:os"
import * as Http from "node:http"
import * as Util from "node:util"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { WebSocket, WebSocketServer } from "ws"
import * as AgentApi from "../../src/AgentApi.js"
import * as AgentSessions from "../../src/AgentSessions.js"
import type * as Agent from "../../src/Agent.js"
import * as Dialect from "../../src/Dialect.js"
import * as EventStream from "../../src/EventStream.js"
import * as NodeAgentSessions from "../../src/NodeAgentSessions.js"
import * as Simulator from "effect-agent-session-simulator/Simulator"
import * as Wire from "../../src/Wire.js"
import { exitTag, failureOf, quickReconnect, request, sdkLayer, watch, wire, withoutTransportEvents } from "./helpers.js"

// ---------------------------------------------------------------------------
// Capturing everything the SDK writes
// ---------------------------------------------------------------------------

/** A span of the in-memory tracer: everything recorded on it. */
class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId: string
  readonly sampled = true
  status: Tracer.SpanStatus
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<{ readonly name: string; readonly attributes?: Record<string, unknown> | undefined }> = []
  links: Array<Tracer.SpanLink>
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.spanId = Crypto.randomBytes(8).toString("hex")
    this.traceId = Option.match(parent, { onNone: () => Crypto.randomBytes(16).toString("hex"), onSome: (p) => p.traceId })
    this.status = { _tag: "Started", startTime }
    this.links = [...links]
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push({ name, attributes })
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

/** Text of any value, as far as it can be printed (never throws). */
const show = (value: unknown): string => {
  try {
    return `${String(value)} ${JSON.stringify(value) ?? ""} ${Util.inspect(value, { depth: 8 })}`
  } catch {
    return Util.inspect(value, { depth: 8 })
  }
}

/** Everything about an error a caller might print. */
const errorTexts = (error: unknown): string => {
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : ""
  return [message, show(error)].join("\n")
}

/** A logger and a tracer that keep everything, and the layer that installs both at LogLevel.All. */
const makeCapture = () => {
  const lines: Array<string> = []
  const spans: Array<RecordedSpan> = []
  const logger = Logger.make((options) => {
    lines.push(Logger.logfmtLogger.log(options))
    lines.push(show(Logger.structuredLogger.log(options)))
    if (!Cause.isEmpty(options.cause)) lines.push(Cause.pretty(options.cause, { renderErrorCause: true }))
  })
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span = new RecordedSpan(name, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  const layer = Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, logger),
    Logger.minimumLogLevel(LogLevel.All),
    Layer.setTracer(tracer)
  )
  const spanText = (span: RecordedSpan): string =>
    [
      span.name,
      ...[...span.attributes].map(([k, v]) => `${k}=${show(v)}`),
      ...span.events.map((e) => `${e.name} ${show(e.attributes)}`),
      span.status._tag === "Ended" && Exit.isFailure(span.status.exit)
        ? Cause.pretty(span.status.exit.cause, { renderErrorCause: true })
        : ""
    ].join("\n")
  return {
    layer,
    lines,
    spans,
    /** All the text written: logs, then spans. */
    text: () => [...lines, ...spans.map(spanText)].join("\n")
  }
}

/** A key that cannot appear by accident. */
const makeKey = (prefix: string) => `${prefix}_${Crypto.randomBytes(18).toString("hex")}`

/** The last character changed: a key that must be refused. */
const lastCharChanged = (key: string) => `${key.slice(0, -1)}${key.endsWith("0") ? "1" : "0"}`

/** Asserts that no secret (nor its distinctive second half) appears in `text`. */
const assertNoSecret = (text: string, secrets: ReadonlyArray<string>, where: string) => {
  for (const secret of secrets) {
    assert.isFalse(text.includes(secret), `${where} contains a key`)
    assert.isFalse(text.includes(secret.slice(secret.length / 2)), `${where} contains part of a key`)
  }
}

// ---------------------------------------------------------------------------
// The SDK
// ---------------------------------------------------------------------------

describe("security: the SDK", () => {
  for (const dialect of [Dialect.documented, Dialect.observed]) {
    it.live(
      `U12 no key in logs (LogLevel.All), spans, errors or their JSON over whole runs with failures and reconnects (${dialect.name} dialect)`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const accountKey = makeKey("sk_live")
          const wrongKey = lastCharChanged(accountKey)
          const sim = yield* Effect.orDie(Simulator.make({
            port: 0,
            dialect,
            accountKey,
            scenario: { actions: 5, frameDelay: "1 millis", ask: "input" },
            faults: { http: { fail503: 2 }, ws: { dropAfter: [3, 9], malformedAt: 5, unknownEventAt: 6 } }
          }))
          const capture = makeCapture()
          const errors: Array<unknown> = []
          const keep = <A, E>(exit: Exit.Exit<A, E>) => {
            if (Exit.isFailure(exit)) {
              errors.push(...Cause.failures(exit.cause), ...Cause.defects(exit.cause))
              capture.lines.push(Cause.pretty(exit.cause, { renderErrorCause: true }))
            }
            return exit
          }
          const lenient = { reconnect: quickReconnect, failOnFrameError: false } as const
          const fastRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
          let agent: Agent.Agent | undefined

          yield* Effect.gen(function*() {
            // 1. A whole session with an onboarded agent's key: 503s retried, two drops, a skipped
            //    malformed frame, an unknown event, an answered request.
            agent = yield* AgentSessions.onboard({ name: "secure-agent", website: "https://example.com", domain: "research" })
            const seen = yield* watch(request(), { agent, ...lenient })
            keep(seen.exit)
            assert.strictEqual(exitTag(seen.exit), "success")
            assert.isAbove(seen.states.filter((s) => s._tag === "Reconnecting").length, 1)

            // 2. Failures: a refused handshake, a lost connection, a frame error that fails.
            yield* sim.setFaults({ ws: { rejectHandshake: true } })
            const refused = yield* watch(request(), lenient)
            keep(refused.exit)
            assert.strictEqual(exitTag(refused.exit), "HandshakeRejected")
            yield* sim.setFaults({ ws: { dropAfter: [2] } })
            const lost = yield* watch(request(), { reconnect: Schedule.stop })
            keep(lost.exit)
            assert.strictEqual(exitTag(lost.exit), "ConnectionLost")
            yield* sim.setFaults({ ws: { malformedAt: 2 } })
            const malformed = yield* watch(request())
            keep(malformed.exit)
            assert.strictEqual(exitTag(malformed.exit), "MalformedFrame")
            yield* sim.setFaults({})
          }).pipe(
            Effect.provide(sdkLayer(sim, { http: { retry: fastRetry } })),
            Effect.provide(capture.layer)
          )

          // 3. A wrong key: 401 on create, and a rejected handshake for an existing session.
          const wrong = yield* Effect.gen(function*() {
            const created = keep(yield* Effect.exit(watch(request())))
            assert.strictEqual(exitTag(created), "Unauthorized")
            const api = yield* AgentApi.AgentApi
            keep(yield* Effect.exit(api.onboard({ name: "x", website: "https://example.com", domain: "sales" })))
          }).pipe(Effect.provide(sdkLayer(sim, { apiKey: wrongKey })), Effect.provide(capture.layer), Effect.exit)
          keep(wrong)
          const sessionId = (yield* Effect.provide(
            Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(request())),
            sdkLayer(sim)
          )).session_id
          const handshake = yield* Effect.gen(function*() {
            const channel = yield* EventStream.EventStream
            return yield* Stream.runDrain(channel.events(sessionId, { reconnect: quickReconnect }))
          }).pipe(Effect.provide(sdkLayer(sim, { apiKey: wrongKey })), Effect.provide(capture.layer), Effect.exit)
          keep(handshake)
          assert.strictEqual(exitTag(handshake), "HandshakeRejected")

          // 4. A transport failure (nothing listening), whose cause holds the request.
          const transport = yield* Effect.gen(function*() {
            const api = yield* AgentApi.AgentApi
            return yield* api.createSession(request())
          }).pipe(
            Effect.provide(NodeAgentSessions.layer({
              apiKey: accountKey,
              baseUrl: "http://127.0.0.1:9",
              wsUrl: "ws://127.0.0.1:9",
              dialect,
              http: { retry: Schedule.stop }
            })),
            Effect.provide(capture.layer),
            Effect.exit
          )
          keep(transport)
          assert.strictEqual(exitTag(transport), "TransportError")

          // The agent's own key, onboarded during the run.
          const agentKey = agent === undefined ? Option.none() : Option.map(agent.apiKey, Redacted.value)
          assert.isTrue(Option.isSome(agentKey))
          const all = [accountKey, wrongKey, ...Option.toArray(agentKey)]
          assert.isAbove(capture.lines.length, 50)
          assert.isAbove(capture.spans.length, 10)
          assert.isAbove(errors.length, 5)
          // The capture saw the work it was meant to see.
          expect(capture.lines.some((l) => l.includes("Skipped a frame"))).toBe(true)
          expect(capture.spans.some((s) => s.name.startsWith("EventStream"))).toBe(true)
          expect(capture.spans.some((s) => s.name.startsWith("http.client"))).toBe(true)
          // Debug lines are captured (LogLevel.All), addresses among them, with any key redacted.
          expect(capture.lines.some((l) => l.includes("level=DEBUG") && l.includes("Connecting to"))).toBe(true)
          if (dialect.handshake !== "message") expect(capture.text()).toContain("apiKey=<redacted>")
          assertNoSecret(capture.text(), all, "the logs and spans")
          for (const error of errors) assertNoSecret(errorTexts(error), all, "an error")
        }))
    )
  }

  it.live("U08 documented dialect: the key travels only in the Authorization header and the first frame, never in an address", () =>
    Effect.scoped(Effect.gen(function*() {
      const key = makeKey("sk_live")
      const seen: Array<{ readonly url: string; readonly authorization: string | undefined }> = []
      const firstFrames: Array<string> = []
      const server = Http.createServer((req, res) => {
        seen.push({ url: req.url ?? "", authorization: req.headers.authorization })
        req.resume()
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ session_id: "ses_1", status: "started", start_time: new Date().toISOString() }))
        })
      })
      const wss = new WebSocketServer({ noServer: true })
      server.on("upgrade", (req, socket, head) => {
        seen.push({ url: req.url ?? "", authorization: req.headers.authorization })
        wss.handleUpgrade(req, socket, head, (ws) => {
          ws.once("message", (data) => {
            firstFrames.push(String(data))
            ws.send(Wire.encodeEvent("event-data", {
              _tag: "Complete",
              response: "done",
              type: "STRING",
              total_cost: Option.some(0),
              cost_summary: Option.none(),
              session_id: "ses_1" as never
            }))
          })
        })
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          server.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () =>
          Effect.async<void>((resume) => {
            for (const client of wss.clients) client.terminate()
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const outcome = yield* AgentSessions.run(request()).pipe(
        Effect.provide(NodeAgentSessions.layer({
          apiKey: key,
          baseUrl: `http://127.0.0.1:${port}`,
          wsUrl: `ws://127.0.0.1:${port}`
        }))
      )
      assert.strictEqual(outcome.response, "done")
      expect(seen.map((s) => s.url)).toEqual(["/api/v1sessions", "/v1/connect"])
      for (const s of seen) assert.isFalse(s.url.includes(key))
      assert.strictEqual(seen[0]?.authorization, `Bearer ${key}`)
      assert.strictEqual(seen[1]?.authorization, undefined)
      expect(firstFrames.map((f) => JSON.parse(f))).toEqual([{ apiKey: key, sessionId: "ses_1" }])
    })))

  describe("insecure transport", () => {
    /** A non-loopback address of this machine, if it has one. */
    const lanAddress = Object.values(Os.networkInterfaces()).flat().find((i) =>
      i !== undefined && i.family === "IPv4" && !i.internal
    )?.address

    it.live("ws:// and http:// to a host that is not loopback are refused with InsecureTransport; nothing is sent", () =>
      Effect.gen(function*() {
        const key = makeKey("sk_live")
        // http:// refused when the layer is built (the HTTP client is made then).
        const http = yield* Effect.exit(Layer.build(NodeAgentSessions.layer({
          apiKey: key,
          baseUrl: "http://agents.example.com",
          wsUrl: "wss://agents.example.com"
        })).pipe(Effect.scoped))
        const httpError = failureOf(http)
        assert.isTrue(Option.isSome(httpError) && httpError.value._tag === "InsecureTransport")
        // ws:// refused at connect, before any socket; the key in the address never shows.
        const ws = yield* Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          return yield* Effect.scoped(channel.connect("ses_1"))
        }).pipe(
          Effect.provide(NodeAgentSessions.layer({
            apiKey: key,
            baseUrl: "https://agents.example.com",
            wsUrl: `ws://user:${key}@agents.example.com/?apiKey=${key}`
          })),
          Effect.exit
        )
        const wsError = failureOf(ws)
        assert.isTrue(Option.isSome(wsError) && wsError.value._tag === "InsecureTransport")
        if (Option.isSome(wsError)) assertNoSecret(errorTexts(wsError.value), [key], "InsecureTransport")
        // https:// and wss:// need no opt-in; loopback plain is allowed.
        for (const [baseUrl, wsUrl] of [
          ["https://agents.example.com", "wss://agents.example.com"],
          ["http://localhost:1", "ws://[::1]:1"]
        ] as const) {
          const built = yield* Effect.exit(
            Layer.build(NodeAgentSessions.layer({ apiKey: key, baseUrl, wsUrl })).pipe(Effect.scoped)
          )
          assert.isTrue(Exit.isSuccess(built), baseUrl)
        }
      }))

    it.live(
      `plain transport to this machine's non-loopback address${lanAddress === undefined ? " (none here: refusal only)" : ""}: refused, then served with allowInsecure`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const sim = yield* Effect.orDie(Simulator.make({
            port: 0,
            host: lanAddress === undefined ? "127.0.0.1" : "0.0.0.0",
            scenario: { actions: 2, frameDelay: 0, ask: "none" }
          }))
          const host = lanAddress ?? "192.0.2.1"
          const urls = { baseUrl: `http://${host}:${sim.port}`, wsUrl: `ws://${host}:${sim.port}` }
          const refused = yield* Effect.exit(AgentSessions.run(request()).pipe(
            Effect.provide(NodeAgentSessions.layer({ apiKey: sim.accountKey, ...urls }))
          ))
          const error = failureOf(refused)
          assert.isTrue(Option.isSome(error) && error.value._tag === "InsecureTransport")
          assert.strictEqual(yield* sim.httpRequests, 0)
          if (lanAddress !== undefined) {
            const outcome = yield* AgentSessions.run(request()).pipe(
              Effect.provide(NodeAgentSessions.layer({ apiKey: sim.accountKey, ...urls, allowInsecure: true }))
            )
            assert.strictEqual(outcome.actions, 2)
            assert.strictEqual(yield* sim.httpRequests, 1)
          } else {
            const built = yield* Effect.exit(Layer.build(
              NodeAgentSessions.layer({ apiKey: sim.accountKey, ...urls, allowInsecure: true })
            ).pipe(Effect.scoped))
            assert.isTrue(Exit.isSuccess(built))
          }
        }))
    )
  })
})

// ---------------------------------------------------------------------------
// The simulator
// ---------------------------------------------------------------------------

/** What a raw WebSocket client saw: the HTTP status of a refused upgrade, or the close code. */
const rawConnect = (
  sim: Simulator.Service,
  options: { readonly sessionId: string; readonly apiKey: string }
): Effect.Effect<{ readonly status?: number; readonly code?: number; readonly frames: number }> =>
  Effect.async((resume) => {
    const query = sim.dialect.handshake === "message"
      ? ""
      : `?sessionId=${encodeURIComponent(options.sessionId)}&apiKey=${encodeURIComponent(options.apiKey)}`
    const ws = new WebSocket(`${sim.wsUrl}${sim.dialect.connectPath}${query}`)
    let frames = 0
    ws.on("unexpected-response", (_req, res) => {
      res.resume()
      resume(Effect.succeed({ status: res.statusCode ?? 0, frames }))
      ws.terminate()
    })
    ws.on("error", () => {})
    ws.on("open", () => {
      if (sim.dialect.handshake !== "query") ws.send(JSON.stringify(options))
    })
    ws.on("message", () => {
      frames += 1
    })
    ws.on("close", (code) => resume(Effect.succeed({ code, frames })))
  })

describe("security: the simulator", () => {
  for (const dialect of [Dialect.documented, Dialect.observed]) {
    const refusal = dialect.handshake === "message" ? "close 1008" : "403 at the upgrade"
    it.live(`an agent's key cannot open another agent's session (${dialect.name}: ${refusal} -> HandshakeRejected)`, () =>
      Effect.scoped(Effect.gen(function*() {
        const sim = yield* Effect.orDie(Simulator.make({ port: 0, dialect, scenario: { ask: "none", frameDelay: 0 } }))
        yield* Effect.gen(function*() {
          const onboard = (name: string) => AgentSessions.onboard({ name, website: "https://example.com", domain: "sales" })
          const alice = yield* onboard("alice")
          const bob = yield* onboard("bob")
          const api = yield* AgentApi.AgentApi
          const session = yield* api.createSession(request(), { agent: alice })
          // Bob's key on Alice's session: refused at once, not retried.
          const channel = yield* EventStream.EventStream
          const bobs = yield* Effect.exit(
            Stream.runCollect(channel.events(session.session_id, { agent: bob, reconnect: quickReconnect }))
          )
          const error = failureOf(bobs)
          const code = dialect.handshake === "message" ? 1008 : 403
          assert.isTrue(Option.isSome(error) && error.value._tag === "HandshakeRejected" && error.value.code === code)
          assert.strictEqual(yield* sim.connections(session.session_id), 0)
          // The raw answer of the simulator.
          const bobKey = Option.getOrThrow(bob.apiKey)
          const raw = yield* rawConnect(sim, { sessionId: session.session_id, apiKey: Redacted.value(bobKey) })
          expect(raw).toEqual(dialect.handshake === "message" ? { code: 1008, frames: 0 } : { status: 403, frames: 0 })
          if (dialect.retrieve) {
            const read = yield* Effect.exit(api.getSession(session.session_id, { agent: bob }))
            const readError = failureOf(read)
            assert.isTrue(Option.isSome(readError) && readError.value._tag === "Forbidden")
          }
          // Alice's own key opens it and gets the whole script.
          const events = yield* Stream.runCollect(channel.events(session.session_id, { agent: alice }))
          expect(wire(withoutTransportEvents([...events]))).toEqual(wire(yield* sim.script(session.session_id)))
        }).pipe(Effect.provide(sdkLayer(sim)))
      })))

    it.live(`unknown session ids are refused (${dialect.name} dialect)`, () =>
      Effect.scoped(Effect.gen(function*() {
        const sim = yield* Effect.orDie(Simulator.make({ port: 0, dialect }))
        const raw = yield* rawConnect(sim, { sessionId: "ses_does_not_exist", apiKey: sim.accountKey })
        expect(raw).toEqual(dialect.handshake === "message" ? { code: 1008, frames: 0 } : { status: 404, frames: 0 })
        const counted = { attempts: 0 }
        const exit = yield* Effect.gen(function*() {
          const channel = yield* EventStream.EventStream
          return yield* Stream.runDrain(channel.events("ses_does_not_exist", {
            reconnect: Schedule.spaced("10 millis").pipe(
              Schedule.intersect(Schedule.recurs(2)),
              Schedule.tapInput(() => Effect.sync(() => void counted.attempts++))
            )
          }))
        }).pipe(Effect.provide(sdkLayer(sim)), Effect.exit)
        const error = failureOf(exit)
        if (dialect.handshake === "message") {
          // Close 1008: refused, not retried.
          assert.isTrue(Option.isSome(error) && error.value._tag === "HandshakeRejected" && error.value.code === 1008)
          assert.strictEqual(counted.attempts, 0)
        } else {
          // HTTP 404 at the upgrade: no such session. Refused at once, not retried.
          assert.isTrue(Option.isSome(error) && error.value._tag === "HandshakeRejected" && error.value.code === 404)
          assert.strictEqual(counted.attempts, 0)
        }
      })))
  }

  it.live("keys are compared in constant time (timingSafeEqual over digests); a key differing in its last char is refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const accountKey = makeKey("sk_live")
      const sim = yield* Effect.orDie(Simulator.make({ port: 0, accountKey, scenario: { ask: "none", frameDelay: 0 } }))
      // Every key check goes through crypto.timingSafeEqual: count the calls.
      const crypto = (yield* Effect.promise(() => import("node:crypto"))).default
      const original = crypto.timingSafeEqual
      let calls = 0
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          crypto.timingSafeEqual = (a, b) => {
            calls += 1
            return original(a, b)
          }
          syncBuiltinESMExports()
        }),
        () =>
          Effect.sync(() => {
            crypto.timingSafeEqual = original
            syncBuiltinESMExports()
          })
      )
      const create = (apiKey: string) =>
        Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(request())).pipe(
          Effect.provide(sdkLayer(sim, { apiKey, http: { retry: Schedule.stop } })),
          Effect.exit
        )
      const before = calls
      const good = yield* create(accountKey)
      assert.isTrue(Exit.isSuccess(good))
      assert.isAbove(calls, before)
      for (const key of [lastCharChanged(accountKey), accountKey.slice(0, -1), `${accountKey}x`, ` ${accountKey}`]) {
        const refused = yield* create(key)
        const error = failureOf(refused)
        assert.isTrue(Option.isSome(error) && error.value._tag === "Unauthorized" && error.value.status === 401, key.length.toString())
      }
      // The WebSocket handshake too.
      if (Exit.isSuccess(good)) {
        const atHandshake = calls
        const raw = yield* rawConnect(sim, { sessionId: good.value.session_id, apiKey: lastCharChanged(accountKey) })
        expect(raw).toEqual({ code: 1008, frames: 0 })
        assert.isAbove(calls, atHandshake)
      }
      // Agent keys are found by their SHA-256 digest, never compared as strings.
      const source = yield* Effect.promise(() =>
        import("node:fs/promises").then((fs) => fs.readFile(new URL("../../../simulator/src/internal/store.ts", import.meta.url), "utf8"))
      )
      expect(source).toMatch(/Crypto\.timingSafeEqual\(keyDigest, this\.accountDigest\)/)
      expect(source).toMatch(/agentsByDigest\.get\(keyDigest\.toString\("hex"\)\)/)
    })))

  it.live("request bodies over the size limit are refused with 413 (PayloadTooLarge, not retried)", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Effect.orDie(Simulator.make({ port: 0, maxBodyBytes: 16 * 1024 }))
      const create = (goal: string) =>
        Effect.flatMap(AgentApi.AgentApi, (api) => api.createSession(request(5, goal))).pipe(
          Effect.provide(sdkLayer(sim, { http: { retry: Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(3))) } })),
          Effect.exit
        )
      const tooLarge = yield* create("x".repeat(20 * 1024))
      const error = failureOf(tooLarge)
      assert.isTrue(Option.isSome(error) && error.value._tag === "PayloadTooLarge" && error.value.status === 413)
      assert.strictEqual(yield* sim.httpRequests, 1)
      const fits = yield* create("x".repeat(8 * 1024))
      assert.isTrue(Exit.isSuccess(fits))
      // A chunked body (no Content-Length) over the limit is refused the same way.
      const chunked = yield* Effect.promise(() =>
        fetch(`${sim.baseUrl}${sim.dialect.sessionsPath}`, {
          method: "POST",
          headers: { authorization: `Bearer ${sim.accountKey}`, "content-type": "application/json" },
          body: new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(JSON.stringify(request(5, "y".repeat(40 * 1024)))))
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit).then(async (response) => ({ status: response.status, body: await response.text() }))
      )
      assert.strictEqual(chunked.status, 413)
      expect(JSON.parse(chunked.body)).toMatchObject({ _tag: "PayloadTooLarge" })
    })))
})
