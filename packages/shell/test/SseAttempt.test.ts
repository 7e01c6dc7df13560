/**
 * The SSE attempt without I/O, with hooks that record every call: the stream's query, how a
 * failed, timed-out, refused or ended `GET` ends the attempt (the key scrubbed from what is
 * kept), the body read in pieces into named events (an event or a character split across pieces,
 * comments keeping the connection alive, an event over the bound), and what an answer came to.
 */
import { describe, expect, it } from "vitest"
import { SseAttempt } from "../src/index.js"
import { KEY, key, outcomes, settings, type TestSettings, type Wrapped } from "./helpers.js"

const start = (attemptSettings: TestSettings = settings) => {
  const calls: Array<string> = []
  const hooks: SseAttempt.Hooks<Wrapped> = {
    key,
    open: () => void calls.push("open"),
    namedEvent: (name, data) => void calls.push(`${name} ${data}`),
    tooLarge: (size) => void calls.push(`too large ${size}`),
    alive: () => void calls.push("alive")
  }
  return { attempt: new SseAttempt.SseAttempt(hooks, outcomes, attemptSettings), calls }
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

describe("SseAttempt", () => {
  it("the query: the session and the key in clear", () => {
    expect(start().attempt.params("session-42")).toEqual({ sessionId: "session-42", apiKey: KEY })
  })

  it("the requests: the stream's GET and an answer's POST on the dialect's paths, the key only in the query", () => {
    const paths = { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" } as const
    const requests = start().attempt.requests("https://service.test/base/", paths, "session-42")
    const params = { sessionId: "session-42", apiKey: KEY }
    expect(requests.stream).toEqual({
      method: "GET",
      url: "https://service.test/base/events/v1/connect",
      params,
      headers: { accept: "text/event-stream", "cache-control": "no-cache" },
      body: undefined
    })
    const answer = requests.answer({ granted: true, resource_type: "login" })
    expect(answer).toEqual({
      method: "POST",
      url: "https://service.test/base/events/v1/egress",
      params,
      headers: {},
      body: { text: answer.body?.text, contentType: "application/json" }
    })
    expect(JSON.parse(answer.body?.text ?? "")).toEqual({ event: "external_resource_granted", data: { granted: true, resource_type: "login" } })
    expect(requests.connecting).toContain("https://service.test/base/events/v1/connect?sessionId=session-42")
    expect(requests.connecting).not.toContain(KEY)
    expect(SseAttempt.printableStreamUrl("https://user:pw@service.test/base", paths)).toBe("https://service.test/base/events/v1/connect")
  })

  it("open failures that echo the key: retried as an open failure, the key and the keyed URL scrubbed", () => {
    const { attempt } = start()
    const outcome = attempt.openFailed(new Error(`connect ECONNREFUSED http://service.test/v1/stream?apiKey=${KEY}`))
    expect(outcome).toMatch(/^retry: open failed: connect ECONNREFUSED/)
    expect(outcome).not.toContain(KEY)
  })

  it("a `GET` that did not answer in time: timed out", () => {
    expect(start().attempt.openFailed(SseAttempt.TIMED_OUT)).toBe(`timed out after ${settings.connectTimeoutMillis} ms`)
  })

  it("a refusal whose body echoes the key: rejected with the body, scrubbed; another status: retried", () => {
    const { attempt } = start()
    expect(attempt.refused(401, bytes(`bad key ${KEY}`))).toBe("rejected 401: bad key <redacted>")
    expect(attempt.refused(503, bytes("busy"))).toBe("retry: event stream refused with HTTP 503")
  })

  it("open: the engine hears of it; pieces of the body before it are not read", () => {
    const { attempt, calls } = start()
    attempt.read([bytes("event: a\ndata: {}\n\n")])
    expect(calls).toEqual([])
    attempt.open()
    expect(calls).toEqual(["open"])
  })

  it("the body in pieces: each piece keeps the connection alive, events cross pieces, and so does a character", () => {
    const { attempt, calls } = start()
    attempt.open()
    const euro = bytes("€")
    attempt.read([bytes("event: action_run\ndata: {\"x\":\""), euro.subarray(0, 1)])
    attempt.read([euro.subarray(1), bytes("\"}\n\n: ping\n\n")])
    expect(calls).toEqual(["open", "alive", "alive", "alive", "alive", "action_run {\"x\":\"€\"}"])
  })

  it("an event over maxFrameSize: too large, then the next event read", () => {
    const { attempt, calls } = start({ ...settings, maxFrameSize: 8 })
    attempt.open()
    attempt.read([bytes(`data: ${"x".repeat(20)}\n\ndata: {}\n\n`)])
    expect(calls.filter((call) => call !== "alive" && call !== "open")).toEqual(["too large 20", "message {}"])
  })

  it("the body failed (the key scrubbed) or ended: retried", () => {
    const { attempt } = start()
    expect(attempt.readFailed(new Error(`socket hang up ${KEY}`))).toBe("retry: read failed: socket hang up <redacted>")
    expect(attempt.streamEnded()).toBe("retry: the event stream ended")
  })

  it("an answer: 2xx confirmed, a retryable status retried, another refused; a failure retried, scrubbed", () => {
    const { attempt } = start()
    expect(attempt.answered(200)).toBe("confirmed")
    expect(attempt.answered(204)).toBe("confirmed")
    expect(attempt.answered(503)).toEqual({ retry: true, message: "HTTP 503" })
    expect(attempt.answered(400)).toEqual({ retry: false, message: "HTTP 400" })
    expect(attempt.answerFailed(new Error(`ECONNRESET ${KEY}`))).toEqual({ retry: true, message: "ECONNRESET <redacted>" })
  })
})
