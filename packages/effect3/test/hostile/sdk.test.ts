/**
 * The hostile-server cases of the conformance suite (`hostileCases`, effect-agent-session-conformance)
 * run with the Effect 3 edition: the whole SDK (`NodeAgentSessions.layer`) pointed at a scriptable
 * hostile server on loopback (HTTP, WebSocket, Server-Sent Events). This runner only maps each
 * case's act to this edition's API and records what a caller could see (the typed outcome, every
 * log line at every level, every span, the time taken, the live heap); `hostileVerdict` judges it,
 * once for both editions. vitest runs with --expose-gc (the live heap after a collection).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import {
  type ActResult,
  handles,
  type HostileCase,
  hostileCases,
  hostileFailed,
  hostileKey,
  type HostileObservation,
  hostileVerdict,
  liveHeap,
  renderings,
  type SeenText,
  serverSeen,
  startHostileCase
} from "effect-agent-session-conformance"
import { capture, spying } from "../helpers/sdk.js"
import { act, type Runtime, sdk } from "../shared/hostile.js"



/** Every text a caller could see of a run: the outcome and its cause, the logs, the spans. */
const textsOf = (
  exit: Exit.Exit<ActResult, unknown>,
  logs: ReadonlyArray<string>,
  spans: ReadonlyArray<Tracer.Span>
): ReadonlyArray<SeenText> => {
  const texts: Array<SeenText> = []
  if (Exit.isFailure(exit)) {
    texts.push({ where: "Cause.pretty", text: Cause.pretty(exit.cause) })
    for (const failure of Cause.failures(exit.cause)) {
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
const runOnce = (hostile: HostileCase, runtime: Runtime = "node") =>
  Effect.gen(function*() {
    const started = yield* Effect.acquireRelease(
      Effect.promise(() => startHostileCase(hostile)),
      (servers) => Effect.promise(servers.close)
    )
    const handlesBefore = handles()
    const heapBefore = hostile.expect.heapMiB === undefined ? undefined : liveHeap()
    const logs: Array<string> = []
    const spans: Array<Tracer.Span> = []
    const tracer = yield* spying(spans)
    const guard = hostile.guardMs ?? 30_000
    const start = Date.now()
    const exit = yield* act(hostile.act, started.server).pipe(
      Effect.provide(sdk(started.server, hostile.client, runtime)),
      Effect.timeoutFail({ duration: Duration.millis(guard), onTimeout: () => "hang guard" as const }),
      Effect.withTracer(tracer),
      Effect.provide(Logger.replace(Logger.defaultLogger, capture(logs))),
      Logger.withMinimumLogLevel(LogLevel.All),
      Effect.exit
    )
    const took = Date.now() - start
    if (Exit.isFailure(exit) && Option.getOrUndefined(Cause.failureOption(exit.cause)) === "hang guard") {
      return assert.fail(`hung for more than ${guard} ms`)
    }
    const heapAfter = heapBefore === undefined ? undefined : liveHeap()
    const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
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

describe("hostile server (conformance hostile cases, Effect 3 edition)", () => {
  for (const hostile of hostileCases) {
    it.live(hostile.name, () =>
      Effect.gen(function*() {
        const problems: Array<string> = []
        const runs = hostile.runs ?? 1
        for (let run = 0; run < runs; run++) {
          const { problems: found } = yield* runOnce(hostile)
          problems.push(...found.map((problem) => (runs > 1 ? `run ${run + 1}: ${problem}` : problem)))
        }
        assert.deepStrictEqual(problems, [], problems.join("\n"))
      }))
  }
})

/**
 * The cases that use no WebSocket (HTTP calls, the SSE transport) again over `FetchAgentSessions`:
 * the runtime's `fetch` instead of undici. The WebSocket cases over a standard `WebSocket` run in
 * the runtime tier (`test/runtimes/`) and the Effect 4 edition's hostile runner: Node 20, which
 * runs this suite, has no global `WebSocket`.
 */
const overHttpOnly = (hostile: HostileCase): boolean =>
  hostile.act._tag === "CreateSession" || hostile.act._tag === "GetSession" || hostile.client.transport === "sse"

describe("hostile server (conformance hostile cases without a WebSocket, Effect 3 edition, FetchAgentSessions)", () => {
  for (const hostile of hostileCases.filter(overHttpOnly)) {
    it.live(hostile.name, () =>
      Effect.gen(function*() {
        const problems: Array<string> = []
        const runs = hostile.runs ?? 1
        for (let run = 0; run < runs; run++) {
          const { problems: found } = yield* runOnce(hostile, "fetch")
          problems.push(...found.map((problem) => (runs > 1 ? `run ${run + 1}: ${problem}` : problem)))
        }
        assert.deepStrictEqual(problems, [], problems.join("\n"))
      }))
  }
})

describe("hostile server: what only the Effect 3 edition shows", () => {
  // @effect/platform's HttpClient records each response header on the request's span
  // (`http.response.header.<name>`, the values of secret ones redacted); effect 4's records the
  // status only, so this part of U18 is this edition's alone.
  it.live("U18 response header names stay visible on the HTTP client's spans, the key in none of their values", () =>
    Effect.gen(function*() {
      const echoed = hostileCases.find((hostile) => hostile.name.startsWith("U18 a key echoed in every header of a 429"))
      assert.isDefined(echoed)
      if (echoed === undefined) return
      const { observed, problems } = yield* runOnce(echoed)
      assert.deepStrictEqual(problems, [], problems.join("\n"))
      const names = observed.spans.flatMap((span) => span.attributes)
      assert.include(names, "http.response.header.x-echo")
      assert.include(names, "http.response.header.x-request-id")
    }))
})

describe("hostileVerdict (the judge both editions share) sees what breaks a case", () => {
  const find = (name: string): HostileCase => {
    const found = hostileCases.find((hostile) => hostile.name.startsWith(name))
    assert.isDefined(found, name)
    return found as HostileCase
  }
  const server = { requests: [{ method: "POST" }], upgrades: 0, openAfter: 0 }
  const tooLarge = (fields: Record<string, string | number | boolean>) => ({
    _tag: "Failed" as const,
    tag: "ResponseTooLarge",
    text: "the response is too large",
    fields
  })

  it("accepts what holds, and names a wrong tag, a wrong field, a retry, a leaked key, a grown heap, a connection left", () => {
    const endless = find("a 200 whose body never ends")
    const good: HostileObservation = {
      ending: tooLarge({ limit: 4 * 1024 * 1024, size: 5 * 1024 * 1024, status: 200 }),
      millis: 100,
      texts: [{ where: "a log line", text: "level=DEBUG message=ok" }],
      spans: [],
      heapGrowth: 1024,
      server
    }
    assert.deepStrictEqual(hostileVerdict(endless, good), [])
    const wrong: ReadonlyArray<HostileObservation> = [
      { ...good, ending: { _tag: "Ok" } },
      { ...good, ending: { ...tooLarge({ limit: 4 * 1024 * 1024, size: 5 * 1024 * 1024, status: 200 }), tag: "TransportError" } },
      { ...good, ending: tooLarge({ limit: 1024, size: 5 * 1024 * 1024, status: 200 }) },
      { ...good, ending: tooLarge({ limit: 4 * 1024 * 1024, size: 1, status: 200 }) },
      { ...good, server: { ...server, requests: [{ method: "POST" }, { method: "POST" }] } },
      { ...good, texts: [{ where: "a log line", text: `key=${hostileKey}` }] },
      { ...good, ending: { ...tooLarge({ limit: 4 * 1024 * 1024, size: 5 * 1024 * 1024, status: 200 }), text: hostileKey } },
      { ...good, heapGrowth: 100 * 1024 * 1024 },
      { ending: good.ending, millis: good.millis, texts: good.texts, spans: good.spans, server },
      { ...good, server: { ...server, openAfter: 1 } }
    ]
    for (const observed of wrong) assert.isNotEmpty(hostileVerdict(endless, observed), JSON.stringify(observed).slice(0, 300))
  })

  it("names an unsent answer not reported, a close that took too long, sockets and timers left, a redirect followed", () => {
    const close = find("U16 SSE: close returns within the answer time-out")
    const unsent = [{ actionSessionId: "as-1", resourceType: "request_user_input" }]
    const good: HostileObservation = {
      ending: { _tag: "Ok" },
      result: { closeMillis: 600, state: { tag: "Closed", reason: "closed-by-caller", unsent } },
      millis: 700,
      texts: [],
      spans: [],
      server
    }
    assert.deepStrictEqual(hostileVerdict(close, good), [])
    assert.isNotEmpty(hostileVerdict(close, { ...good, result: { closeMillis: 600, state: { tag: "Closed", reason: "closed-by-caller", unsent: [] } } }))
    assert.isNotEmpty(hostileVerdict(close, { ...good, result: { closeMillis: 20_000, state: { tag: "Closed", reason: "closed-by-caller", unsent } } }))
    assert.isNotEmpty(hostileVerdict(close, { ...good, result: { closeMillis: 600, state: { tag: "Open" } } }))
    const interrupted = find("createSession interrupted at 30 points")
    const clean: HostileObservation = { ...good, result: {}, server: { ...server, handlesLeft: {} } }
    assert.deepStrictEqual(hostileVerdict(interrupted, clean), [])
    assert.isNotEmpty(hostileVerdict(interrupted, { ...clean, server: { ...server, handlesLeft: { Timeout: 1 } } }))
    assert.isNotEmpty(hostileVerdict(interrupted, { ...clean, server: { requests: [], upgrades: 0 } }))
    const redirect = find("a redirect (307)")
    const refused: HostileObservation = {
      ...good,
      ending: { _tag: "Failed", tag: "UnexpectedStatus", text: "307", fields: { status: 307 } },
      server: { ...server, elsewhere: 0 }
    }
    assert.deepStrictEqual(hostileVerdict(redirect, refused), [])
    assert.isNotEmpty(hostileVerdict(redirect, { ...refused, server: { ...server, elsewhere: 1 } }))
  })
})
