import { describe, expect, it } from "vitest"
import { Telemetry } from "../src/index.js"

describe("Telemetry: what the SDK reports", () => {
  it("every metric's name has the prefix, and no two metrics share a name", () => {
    const names = Object.values(Telemetry.metrics).map((metric) => metric.name)
    for (const name of names) expect(Telemetry.isOwnMetric(name), name).toBe(true)
    expect(new Set(names).size).toBe(names.length)
    expect(Telemetry.isOwnMetric("http_requests_total")).toBe(false)
  })

  it("events are tallied by tag, once per tag present", () => {
    const tally = Telemetry.tallyByTag([{ _tag: "ActionRun" }, { _tag: "Message" }, { _tag: "ActionRun" }])
    expect([...tally]).toEqual([["ActionRun", 2], ["Message", 1]])
    expect(Telemetry.tallyByTag([]).size).toBe(0)
    expect(Telemetry.chargeableTag).toBe("ActionRun")
  })

  it("a batch is counted by tag: one add per tag present, the target handed as it is", () => {
    const count = (events: Iterable<{ readonly _tag: string }>) => {
      const calls: Array<[string, number, string]> = []
      Telemetry.countByTag(events, (tag, n, target: string) => calls.push([tag, n, target]), "t")
      return calls
    }
    expect(count([{ _tag: "Message" }, { _tag: "Message" }, { _tag: "Message" }])).toEqual([["Message", 3, "t"]])
    expect(count([{ _tag: "ActionRun" }, { _tag: "Message" }, { _tag: "ActionRun" }])).toEqual([
      ["ActionRun", 2, "t"],
      ["Message", 1, "t"]
    ])
    expect(count([{ _tag: "Message" }, { _tag: "Message" }, { _tag: "ActionRun" }])).toEqual([
      ["Message", 2, "t"],
      ["ActionRun", 1, "t"]
    ])
    expect(count([])).toEqual([])
    expect(count(new Set([{ _tag: "KeepAlive" }, { _tag: "KeepAlive" }]))).toEqual([["KeepAlive", 2, "t"]])
  })

  it("the answer and status attributes", () => {
    expect(Telemetry.answerLabel({ _tag: "Grant" })).toBe("grant")
    expect(Telemetry.answerLabel({ _tag: "Deny" })).toBe("deny")
    expect(Telemetry.statusLabel(503)).toBe("503")
    expect(Telemetry.statusLabel("timeout")).toBe("timeout")
  })

  it("a span's attributes name the agent only when there is one", () => {
    expect(Telemetry.apiSpanAttributes({ dialect: "observed", serverAddress: "h:1" })).toEqual({
      "agent_session.dialect": "observed",
      "server.address": "h:1"
    })
    expect(Telemetry.apiSpanAttributes({ dialect: "documented", serverAddress: "h", agentId: "a1" })).toEqual({
      "agent_session.dialect": "documented",
      "server.address": "h",
      "agent_session.agent_id": "a1"
    })
  })

  it("readings are sorted by name then labels, summed by exact labels, and printed", () => {
    const readings: Array<Telemetry.Reading> = [
      { _tag: "Counter", name: "agent_session_b", labels: { z: "1", a: "2" }, count: 3 },
      { _tag: "Counter", name: "agent_session_a", labels: {}, count: 1 },
      { _tag: "Histogram", name: "agent_session_h", labels: {}, count: 0, sum: 0, min: Infinity, max: -Infinity },
      { _tag: "Histogram", name: "agent_session_h", labels: { x: "y" }, count: 2, sum: 3.14159, min: 1, max: 2.14159 }
    ]
    const sorted = Telemetry.sortReadings([...readings])
    expect(sorted.map((r) => `${r.name}${Telemetry.formatLabels(r.labels)}`)).toEqual([
      "agent_session_a",
      `agent_session_b{a="2",z="1"}`,
      "agent_session_h",
      `agent_session_h{x="y"}`
    ])
    expect(Telemetry.counterTotal(readings, "agent_session_b", { a: "2", z: "1" })).toBe(3)
    expect(Telemetry.counterTotal(readings, "agent_session_b")).toBe(0)
    expect(Telemetry.counterTotal(readings, "agent_session_h")).toBe(0)
    expect(Telemetry.format(sorted)).toEqual([
      "agent_session_a 1",
      `agent_session_b{a="2",z="1"} 3`,
      "agent_session_h count=0 sum=0 min=0 max=0",
      `agent_session_h{x="y"} count=2 sum=3.14 min=1 max=2.14`
    ])
  })

  it("the HTTP client's operations, spans and log lines", () => {
    expect(Telemetry.apiOperation("createSession")).toBe("AgentApi.createSession")
    for (const [operation, span] of Object.entries(Telemetry.apiSpans)) expect(span).toBe(Telemetry.apiOperation(operation))
    expect(Telemetry.retryLog("onboard", "1s 500ms")).toBe("AgentApi.onboard retrying in 1s 500ms")
    const withStatus = { _tag: "ServerError", message: "m", status: 502 }
    expect(Telemetry.attemptFailedAnnotations(withStatus)).toStrictEqual({
      error: "ServerError",
      message: "m",
      retryable: true,
      status: 502
    })
    expect(Telemetry.attemptFailedAnnotations({ _tag: "TransportError", message: "reset" })).toStrictEqual({
      error: "TransportError",
      message: "reset",
      retryable: true
    })
    // Whether it is retryable is the protocol's rule (Failures.isRetryable), not the caller's word.
    const failed = (_tag: string, status?: number) => ({ _tag, message: "m", ...(status === undefined ? {} : { status }) })
    const cases = [
      [failed("ServerError", 503), true],
      [failed("BadRequest", 400), false],
      [failed("RequestTimeout"), true],
      [failed("InvalidRequest"), false]
    ] as const
    for (const [error, retryable] of cases) {
      expect(Telemetry.attemptFailedAnnotations(error)["retryable"], error._tag).toBe(retryable)
    }
  })

  it("the attributes of HTTP counters and the identity of a metric with attributes", () => {
    expect(Telemetry.httpAttributes("onboard", 503)).toStrictEqual({ operation: "onboard", status: "503" })
    expect(Telemetry.httpAttributes("createSession", "timeout")).toStrictEqual({ operation: "createSession", status: "timeout" })
    const id = Telemetry.attributedId("agent_session_x", { operation: "onboard", status: "503" })
    expect(id).toBe("agent_session_x\u0000operation\u0000onboard\u0000status\u0000503")
    expect(Telemetry.attributedId("agent_session_x", {})).toBe("agent_session_x")
    // Keys and values do not run together: each pair stays apart.
    expect(Telemetry.attributedId("m", { a: "bc" })).not.toBe(Telemetry.attributedId("m", { ab: "c" }))
  })

  it("readings are built, filtered and sorted from a registry's metrics", () => {
    expect(Telemetry.counterReading("agent_session_a", { k: "v" }, 2)).toStrictEqual({
      _tag: "Counter",
      name: "agent_session_a",
      labels: { k: "v" },
      count: 2
    })
    expect(Telemetry.histogramReading("agent_session_h", {}, { count: 1, sum: 5, min: 5, max: 5 })).toStrictEqual({
      _tag: "Histogram",
      name: "agent_session_h",
      labels: {},
      count: 1,
      sum: 5,
      min: 5,
      max: 5
    })
    const registry = [{ name: "agent_session_b", n: 1 }, { name: "other", n: 9 }, { name: "agent_session_a", n: 3 }]
    const readings = Telemetry.readingsOf(
      registry,
      (m) => Telemetry.isOwnMetric(m.name) ? Telemetry.counterReading(m.name, {}, m.n) : undefined
    )
    expect(readings.map((r) => r.name)).toEqual(["agent_session_a", "agent_session_b"])
  })
})
