import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Dialect, Model } from "../src/index.js"

describe("Model: the document's values", () => {
  it("the agent domains, session statuses and dialect names", () => {
    expect(Model.agentDomains).toEqual(["sales", "marketing", "research", "automation", "podcasting"])
    expect(Model.sessionStatuses).toEqual(["started", "in_progress", "complete"])
    expect(Dialect.names.map(Dialect.fromName)).toEqual([Dialect.documented, Dialect.observed])
  })
})

describe("Model: a caller's request (U20)", () => {
  it("U20 start_url is an absolute http(s) URL with a host", () => {
    for (const url of ["https://example.com", "http://127.0.0.1:8080/a?b=c", "HTTPS://EXAMPLE.COM/x"]) {
      expect(Model.isHttpUrl(url), url).toBe(true)
    }
    for (const url of ["", "example.com", "/relative", "ftp://example.com", "javascript:alert(1)", "http://", "file:///etc"]) {
      expect(Model.isHttpUrl(url), url).toBe(false)
    }
    fc.assert(fc.property(fc.webUrl({ validSchemes: ["http", "https"] }), (url) => {
      expect(Model.isHttpUrl(url)).toBe(true)
    }))
    expect(Model.httpUrlMessage).toBe("must be an absolute http(s) URL")
  })

  it("U20 goal, names and ids are not blank; max_actions is an integer from 1", () => {
    expect(["a", " a ", "\tgo"].map(Model.isNonBlank)).toEqual([true, true, true])
    expect(["", " ", "\n\t "].map(Model.isNonBlank)).toEqual([false, false, false])
    expect(Model.nonBlankMessage).toBe("must not be empty or blank")
    expect(Model.minMaxActions).toBe(1)
    expect(Model.maxActionsMessage).toBe("must be an integer >= 1")
  })
})

describe("Model: timestamps (U02)", () => {
  it("U02 epoch seconds and milliseconds, as numbers or numeric text, are epoch milliseconds", () => {
    expect(Model.readTimestamp("1700000000")).toBe(1_700_000_000_000)
    expect(Model.readTimestamp(" 1700000000123 ")).toBe(1_700_000_000_123)
    expect(Model.readTimestamp("1.5")).toBe(1500)
    expect(Model.readTimestamp("-2")).toBe(-2000)
    expect(Model.readTimestamp(String(Model.secondsBelow))).toBe(Model.secondsBelow)
  })

  it("U02 an ISO-looking date is handed on trimmed; anything else is nothing, never a failure", () => {
    expect(Model.readTimestamp(" 2026-01-02T03:04:05Z ")).toBe("2026-01-02T03:04:05Z")
    expect(Model.readTimestamp("2026-01-02")).toBe("2026-01-02")
    for (const raw of ["", "  ", "yesterday", "Jan 2 2026", "1e5", "12:00"]) expect(Model.readTimestamp(raw), raw).toBeUndefined()
    fc.assert(fc.property(fc.string(), (raw) => {
      const read = Model.readTimestamp(raw)
      expect(read === undefined || typeof read === "number" || /^\d{4}-\d{2}-\d{2}/.test(read)).toBe(true)
    }))
  })
})

describe("Model: the observed dialect's bodies", () => {
  it("a create-session body: what is left out or null is the observed server's default", () => {
    expect(Model.fromObservedCreateBody({ goal: "g" })).toEqual({
      goal: "g",
      start_url: Model.observedDefaults.startUrl,
      max_actions: Model.observedDefaults.maxActions
    })
    expect(Model.fromObservedCreateBody({ goal: "g", url: null, max_actions: null, auto_trigger: null })).toEqual({
      goal: "g",
      start_url: "https://example.com/",
      max_actions: 20
    })
    expect(Model.fromObservedCreateBody({ goal: "g", url: "https://a.test", max_actions: 3, auto_trigger: { interval: 5 } }))
      .toEqual({ goal: "g", start_url: "https://a.test", max_actions: 3, auto_trigger: { interval: 5 } })
  })

  it("a create-session request round-trips through the observed body", () => {
    const request = { goal: "g", start_url: "https://a.test", max_actions: 4 }
    expect(Model.toObservedCreateBody(request)).toEqual({ goal: "g", url: "https://a.test", max_actions: 4 })
    expect(Model.fromObservedCreateBody(Model.toObservedCreateBody(request))).toEqual(request)
    const scheduled = { ...request, auto_trigger: { start_now: true } }
    expect(Model.fromObservedCreateBody(Model.toObservedCreateBody(scheduled))).toEqual(scheduled)
  })

  it("the session envelope: sessionId is session_id, the rest as sent, absent fields stay absent", () => {
    const flat = Model.fromObservedSession({ data: { sessionId: "s1", status: "in_progress", start_time: 17, error: undefined } })
    expect(flat).toEqual({ session_id: "s1", status: "in_progress", start_time: 17 })
    expect(Object.keys(flat)).toEqual(["session_id", "status", "start_time"])
    expect(Model.toObservedSession(flat)).toEqual({ data: { sessionId: "s1", status: "in_progress", start_time: 17 } })
    fc.assert(fc.property(
      fc.record({
        session_id: fc.string(),
        status: fc.string(),
        start_time: fc.oneof(fc.string(), fc.integer()),
        end_time: fc.oneof(fc.string(), fc.integer()),
        error: fc.string()
      }, { requiredKeys: ["session_id"] }),
      (session) => {
        expect(Model.fromObservedSession(Model.toObservedSession(session))).toEqual(session)
      }
    ))
  })
})
