/**
 * The hostile-server cases of the conformance suite (`hostileCases`, effect-agent-session-conformance)
 * as only the Effect 3 edition runs them: the cases without a WebSocket over `FetchAgentSessions`,
 * what only this edition's spans show, and the checks of `hostileVerdict` itself. Every case over
 * `NodeAgentSessions` runs in `test/shared/hostile.test.ts`, written once for both editions, whose
 * `./hostile.ts` observes a run (the typed outcome, every log line at every level, every span, the
 * time taken, the live heap) for `hostileVerdict` to judge. vitest runs with --expose-gc.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type HostileCase, hostileCases, hostileKey, type HostileObservation, hostileVerdict } from "effect-agent-session-conformance"
import { problemsOf, runOnce } from "../shared/hostile.js"

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
        const problems = yield* problemsOf(hostile, "fetch")
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
      const { observed, problems } = yield* runOnce(echoed, "node")
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
