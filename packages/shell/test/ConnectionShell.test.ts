/**
 * The connection's shell without an edition (packages/shell/src/ConnectionShell.ts): a plain
 * host (an array for the consumer, a list of warnings, a clock by hand, `JSON.parse` for a
 * decoder) drives it as an edition does. What events and errors are; an attempt's hooks (frames of
 * the current attempt only, SSE events rebuilt, frames too large, the end as an `Ending` or an
 * `Exit`'s shape, the wait for open and for the end); the connection's actions done (reading paused and resumed on the
 * current transport, the writer asked for, skipped frames and forgotten requests worth a warning);
 * the writer's steps; the end; and frame errors without the key.
 */
import { describe, expect, it } from "vitest"
import type { Connection, Frame } from "effect-agent-session-core"
import { Ledger } from "effect-agent-session-core"
import { ConnectionShell, type Deadlines } from "../src/index.js"

type Event = ConnectionShell.Event
interface Failure extends ConnectionShell.Failure {
  readonly raw?: string
  readonly event?: string
}

const options: Connection.Options = {
  bufferSize: 4,
  answerBufferSize: 2,
  idleTimeoutMillis: 1_000,
  endOnError: false,
  failOnFrameError: false
}

class Io implements ConnectionShell.Reader {
  readonly calls: Array<string> = []
  readonly pause = (): void => {
    this.calls.push("pause")
  }
  readonly resume = (): void => {
    this.calls.push("resume")
  }
  readonly abort = (): void => {
    this.calls.push("abort")
  }
}

class Shell extends ConnectionShell.ConnectionShell<Event, Failure, Failure, Io> {
  time = 0
  writes = 0
  readonly events: Array<Event> = []
  readonly warnings: Array<readonly [string, Record<string, unknown>]> = []
  readonly entries: Array<readonly [number, Deadlines.Check]> = []
  /** The indexes of the entries cancelled. */
  readonly cancelled: Array<number> = []
  deliver(event: Event): void {
    this.events.push(event)
  }
  write(): void {
    this.writes += 1
  }
  schedule(at: number, check: Deadlines.Check): Deadlines.Entry {
    const index = this.entries.push([at, check]) - 1
    return { cancel: () => this.cancelled.push(index) }
  }
  now(): number {
    return this.time
  }
  protected warn(message: string, annotations: Record<string, unknown>): void {
    this.warnings.push([message, annotations])
  }
}

class Attempt extends ConnectionShell.Attempt<Event, Failure, Failure, Io> {
  constructor(shell: Shell, id: number, readonly key = "sk-secret") {
    super(shell, id)
  }
  protected read(data: string | Uint8Array, print: string | undefined): void {
    this.decode(typeof data === "string" ? data : new TextDecoder().decode(data), print)
  }
  protected readNamed(name: string, data: string, print: string): void {
    this.named.push([name, data, print])
    this.decode(data, print)
  }
  private decode(text: string, print: string | undefined): void {
    const parsed: unknown = text.startsWith("{") ? JSON.parse(text) : undefined
    if (typeof parsed === "object" && parsed !== null && "_tag" in parsed) this.event(parsed as Event, print)
    else this.failed({ _tag: "MalformedFrame", message: `not an event: ${text}`, raw: text })
  }
  readonly named: Array<readonly [string, string, string]> = []
  protected frameTooLarge(size: number): Failure {
    return { _tag: "FrameTooLarge", message: `a frame of ${size} bytes` }
  }
  protected scrub(error: Failure): Failure {
    return error.raw === undefined ? error : { ...error, raw: error.raw.split(this.key).join("<redacted>") }
  }
}

/** A shell with its first attempt begun, attached and current. */
const started = (overrides: Partial<Connection.Options> = {}) => {
  const shell = new Shell({ ...options, ...overrides }, ConnectionShell.classifier)
  const attempt = new Attempt(shell, shell.begin())
  shell.current = attempt
  const io = new Io()
  attempt.attach(io)
  return { shell, attempt, io }
}

const data = (granted: boolean): Frame.AnswerData => ({ granted, resource_type: "request_user_input" })

const request = (id: string): ConnectionShell.Request => ({
  _tag: "ExternalResourceRequested",
  action_session_id: id,
  resource_type: "request_user_input"
})

describe("ConnectionShell: what events and errors are", () => {
  it("an event's wire name and kind; an unknown event by its own name", () => {
    expect(ConnectionShell.wireNameOf({ _tag: "ActionRun" })).toBe("action_run")
    expect(ConnectionShell.wireNameOf({ _tag: "Unrecognized", event: "brand_new" })).toBe("brand_new")
    const { kind } = ConnectionShell.classifier
    expect(kind({ _tag: "Heartbeat" })).toBe("keep-alive")
    expect(kind({ _tag: "Connected" })).toBe("keep-alive")
    expect(kind({ _tag: "Complete" })).toBe("complete")
    expect(kind({ _tag: "AgentError" })).toBe("error")
    expect(kind({ _tag: "ActionRun" })).toBe("chargeable")
    expect(kind(request("a"))).toBe("request")
    expect(kind({ _tag: "Unrecognized", event: "heartbeat" })).toBe("keep-alive")
    expect(kind({ _tag: "Unrecognized", event: "brand_new" })).toBe("event")
  })

  it("a request's key, whether its resource type is known or kept raw; none for another event", () => {
    const key = ConnectionShell.keyOf(request("a"))
    expect(key).toBe(Ledger.requestKey("a", "request_user_input"))
    expect(ConnectionShell.keyOf({ ...request("a"), resource_type: { raw: "request_user_input" } })).toBe(key)
    expect(ConnectionShell.classifier.requestKey(request("a"))).toBe(key)
    expect(ConnectionShell.classifier.requestKey({ _tag: "Started" })).toBe("")
  })

  it("only an `action_run` that does not decode is chargeable", () => {
    const { chargeable, message } = ConnectionShell.classifier
    const failure = (tag: string, event?: string): Failure =>
      event === undefined ? { _tag: tag, message: "m" } : { _tag: tag, message: "m", event }
    expect(chargeable(failure("EventDecodeError", "action_run"))).toBe(true)
    expect(chargeable(failure("EventDecodeError", "started"))).toBe(false)
    expect(chargeable(failure("UnknownEvent", "action_run"))).toBe(false)
    expect(chargeable(failure("EventDecodeError"))).toBe(false)
    expect(message({ _tag: "ConnectTimeout", message: "no open in 10s" })).toBe("no open in 10s")
  })
})

describe("ConnectionShell.sessionClassifier: what the session's rules read of an event", () => {
  const none = { _tag: "None" } as const
  const some = <A>(value: A) => ({ _tag: "Some", value }) as const
  const { actionSessionId, cost, errorText, resourceType, wireName } = ConnectionShell.sessionClassifier

  it("a request's ids, its resource type raw whether known or not; an event's wire name", () => {
    expect(actionSessionId(request("a"))).toBe("a")
    expect(resourceType(request("a"))).toBe("request_user_input")
    expect(resourceType({ ...request("a"), resource_type: { raw: "brand_new_kind" } })).toBe("brand_new_kind")
    expect(wireName({ _tag: "ActionRun" })).toBe("action_run")
    expect(wireName({ _tag: "Unrecognized", event: "brand_new" })).toBe("brand_new")
  })

  it("an error event's text; none for another event", () => {
    expect(errorText({ _tag: "AgentError", error: "the page did not load" })).toBe("the page did not load")
    expect(errorText({ _tag: "AgentError" })).toBe("")
    expect(errorText({ _tag: "ActionRun" })).toBe("")
  })

  it("a complete event's cost: total_cost first, else the cost summary's, else none", () => {
    expect(cost({ _tag: "Complete", total_cost: some(0.25), cost_summary: some({ total_cost: 9 }) })).toBe(0.25)
    expect(cost({ _tag: "Complete", total_cost: none, cost_summary: some({ total_cost: 0.5 }) })).toBe(0.5)
    expect(cost({ _tag: "Complete", total_cost: none, cost_summary: some({ total: 0.75 }) })).toBe(0.75)
    expect(cost({ _tag: "Complete", total_cost: none, cost_summary: some({ total: "free" }) })).toBeUndefined()
    expect(cost({ _tag: "Complete", total_cost: none, cost_summary: none })).toBeUndefined()
  })
})

describe("ConnectionShell: an attempt's hooks", () => {
  it("frames of the current attempt are delivered in order; a stale attempt's are ignored", () => {
    const { attempt, shell } = started()
    attempt.open()
    attempt.frame(`{"_tag":"Started"}`)
    attempt.frame(new TextEncoder().encode(`{"_tag":"ActionRun"}`))
    const next = new Attempt(shell, shell.begin())
    shell.current = next
    attempt.frame(`{"_tag":"Complete"}`)
    attempt.namedEvent("complete", "{}")
    attempt.tooLarge(10)
    expect(shell.events).toEqual([{ _tag: "Started" }, { _tag: "ActionRun" }])
    expect(attempt.live).toBe(false)
    expect(next.live).toBe(true)
  })

  it("an SSE event is read by name and data, never as a frame rebuilt to be parsed again; its identity names both", () => {
    const { attempt, shell } = started()
    const read: Array<string | Uint8Array> = []
    const spy = new (class extends Attempt {
      protected override read(data: string | Uint8Array, print: string | undefined): void {
        read.push(data)
        super.read(data, print)
      }
    })(shell, attempt.id)
    shell.current = spy
    spy.namedEvent("started", `{"_tag":"Started"}`)
    spy.namedEvent("started", "")
    spy.namedEvent("start", `ed{"_tag":"Started"}`)
    expect(read).toEqual([])
    expect(spy.named).toEqual([
      ["started", `{"_tag":"Started"}`, `"started"{"_tag":"Started"}`],
      ["started", "", `"started"`],
      // Another name and data that join into the same text: another identity.
      ["start", `ed{"_tag":"Started"}`, `"start"ed{"_tag":"Started"}`]
    ])
  })

  it("a skipped frame is worth a warning, its raw text without the key and bounded", () => {
    const { attempt, shell } = started()
    attempt.open()
    attempt.frame(`"sk-secret ${"x".repeat(5_000)}"`)
    expect(shell.connection.skipped).toBe(1)
    expect(shell.warnings).toHaveLength(1)
    const [message, annotations] = shell.warnings[0]!
    expect(message.startsWith("Skipped a frame: not an event")).toBe(true)
    expect(annotations["frameError"]).toBe("MalformedFrame")
    expect(annotations["skipped"]).toBe(1)
    const raw = String(annotations["raw"])
    expect(raw).not.toContain("sk-secret")
    expect(raw.length).toBeLessThan(5_000)
  })

  it("a frame too large ends the attempt when frame errors fail", () => {
    const { attempt, shell } = started({ failOnFrameError: true })
    attempt.open()
    attempt.tooLarge(2_000_000)
    const next = shell.connection.attemptEnded(attempt.id, 1)
    expect(next._tag).toBe("Finish")
    expect(next._tag === "Finish" && next.error).toEqual({ _tag: "FrameTooLarge", message: "a frame of 2000000 bytes" })
  })

  it("the wait for the open and for the end: resumed once, when settled", () => {
    const { attempt, shell } = started()
    let opened = 0
    let ended = 0
    expect(attempt.whenSettled(false, () => (opened += 1))).toBe(false)
    attempt.wake()
    expect(opened).toBe(0)
    attempt.open()
    expect(attempt.opened).toBe(true)
    expect(opened).toBe(1)
    expect(attempt.whenSettled(false, () => (opened += 1))).toBe(true)
    expect(attempt.whenSettled(true, () => (ended += 1))).toBe(false)
    attempt.frame(`{"_tag":"Started"}`)
    expect(ended).toBe(0)
    attempt.end({ _tag: "End", reason: "closed-by-service" })
    attempt.end({ _tag: "Retry", error: "the first ending wins" })
    expect([opened, ended]).toEqual([1, 1])
    expect(shell.connection.attemptEnded(attempt.id, 2)).toMatchObject({ _tag: "Finish", reason: "closed-by-service" })
  })

  it("a transport's defect fails the connection", () => {
    const { attempt, shell } = started()
    attempt.open()
    attempt.end({ _tag: "Defect", defect: "a bug" })
    expect(shell.connection.attemptEnded(attempt.id, 1)).toMatchObject({
      _tag: "Finish",
      reason: "failed",
      defect: "a bug"
    })
  })

  it("keep-alive bytes keep the attempt from idling", () => {
    const { attempt, shell } = started()
    attempt.open()
    const idle = shell.entries[0]!
    shell.time = 900
    attempt.alive()
    expect(idle[1](1_000)).toBe(1_900)
  })
})

describe("ConnectionShell: the connection's actions", () => {
  it("pauses and resumes the current transport; aborts it on the idle time-out", () => {
    const { attempt, io, shell } = started({ bufferSize: 2 })
    attempt.open()
    attempt.frame(`{"_tag":"Started"}`)
    attempt.frame(`{"_tag":"ActionRun"}`)
    expect(io.calls).toEqual(["pause"])
    shell.time = 1
    shell.taken(2)
    expect(io.calls).toEqual(["pause", "resume"])
    const idle = shell.entries[0]!
    expect(idle[1](5_000)).toBe(undefined)
    expect(io.calls).toEqual(["pause", "resume", "abort"])
  })

  it("a transport that hands over frames as soon as it is resumed is paused again before it reads on", () => {
    const { attempt, shell } = started({ bufferSize: 4 })
    // Frames held by the transport while paused: a resume hands them over at once, until paused.
    let held = 20
    let paused = false
    let peak = 0
    attempt.attach({
      calls: [],
      pause: () => {
        paused = true
      },
      resume: () => {
        paused = false
        while (!paused && held > 0) {
          held -= 1
          attempt.frame(`{"_tag":"ActionRun"}`)
          peak = Math.max(peak, shell.connection.buffered)
        }
      },
      abort: () => {}
    })
    attempt.open()
    attempt.io?.resume()
    while (held > 0) shell.taken(shell.connection.buffered)
    expect([peak, shell.events.length, held]).toEqual([4, 20, 0])
  })

  it("one timer entry per connection, at its next deadline: not moved by frames, moved by an earlier one", () => {
    const { attempt, shell } = started({ idleTimeoutMillis: 60_000 })
    attempt.open()
    shell.time = 10
    attempt.frame(`{"_tag":"Started"}`)
    attempt.frame(`{"_tag":"ActionRun"}`)
    expect(shell.entries.map(([at]) => at)).toEqual([60_000])
    // The socket is closing: its close has 2 s to come, earlier than the idle check.
    shell.time = 20
    expect(attempt.answerFailed({ retry: true, message: "socket closing", closing: true })).toBe(false)
    expect([shell.entries.map(([at]) => at), shell.cancelled]).toEqual([[60_000, 2_020], [0]])
    // No close came: the attempt is given up as a drop, and no deadline is left.
    expect(shell.entries[1]![1](2_020)).toBe(undefined)
    expect(shell.connection.endingOf(attempt.id)).toEqual({ _tag: "Retry", error: "answer not written: socket closing" })
    expect(shell.connection.nextDeadline()).toBeUndefined()
  })

  it("a timer check that throws (a defect) leaves no stale entry: the next input arms a fresh one", () => {
    const { attempt, shell } = started({ idleTimeoutMillis: 1_000 })
    attempt.open()
    expect(shell.entries.map(([at]) => at)).toEqual([1_000])
    const timeout = shell.connection.timeout.bind(shell.connection)
    shell.connection.timeout = () => {
      throw new Error("a bug")
    }
    shell.time = 1_000
    expect(() => shell.entries[0]![1](1_000)).toThrow("a bug")
    // The timer ended that entry; the connection still waits for the same deadline.
    shell.connection.timeout = timeout
    attempt.frame(`{"_tag":"Started"}`)
    expect(shell.entries.map(([at]) => at)).toEqual([1_000, shell.connection.nextDeadline()])
    expect(shell.entries[1]![1](shell.connection.nextDeadline()!)).toBe(shell.connection.nextDeadline())
  })

  it("the connection's end takes its timer entry away", () => {
    const { attempt, shell } = started()
    attempt.open()
    expect(shell.cancelled).toEqual([])
    shell.finish("closed-by-caller")
    expect([shell.entries.length, shell.cancelled]).toEqual([1, [0]])
  })

  it("an answer to a pending request asks for the writer; the writer's steps", () => {
    const { attempt, io, shell } = started()
    expect(shell.answer(request("a"), "frame", data(true))).toBe("never-received")
    attempt.open()
    attempt.frame(JSON.stringify(request("a")))
    attempt.frame(JSON.stringify(request("b")))
    expect(shell.answer(request("a"), "frame-a", data(true))).toBe(undefined)
    expect(shell.writes).toBe(1)
    expect(shell.answer(request("b"), "frame-b", data(false))).toBe(undefined)
    expect(shell.writes).toBe(1)
    expect(attempt.nextAnswer()?.frame).toBe("frame-a")
    attempt.answerWritten("written")
    expect(attempt.nextAnswer()?.frame).toBe("frame-b")
    expect(attempt.answerFailed({ message: "refused", retry: false })).toBe(true)
    expect(attempt.nextAnswer()).toBe(undefined)
    expect(shell.answer(request("a"), "frame-a", data(true))).toBe("already-answered")
    expect(io.calls).toEqual([])
  })

  it("a writer without a transport stops, and is asked for again by the next answer", () => {
    const shell = new Shell(options, ConnectionShell.classifier)
    const attempt = new Attempt(shell, shell.begin())
    shell.current = attempt
    attempt.open()
    attempt.frame(JSON.stringify(request("a")))
    attempt.frame(JSON.stringify(request("b")))
    expect(shell.answer(request("a"), "frame-a", data(true))).toBe(undefined)
    expect(attempt.nextAnswer()).toBe(undefined)
    attempt.attach(new Io())
    expect(attempt.nextAnswer()?.frame).toBe("frame-a")
    expect(attempt.answerFailed({ message: "dropped", retry: true })).toBe(false)
  })

  it("a request forgotten past the ledger's bound is worth a warning", () => {
    const { attempt, shell } = started({ bufferSize: 1_000_000 })
    attempt.open()
    for (let i = 0; i <= Ledger.MAX_REQUESTS * 2; i++) attempt.frame(JSON.stringify(request(`r${i}`)))
    expect(shell.warnings.length).toBeGreaterThan(0)
    const [message, annotations] = shell.warnings[0]!
    // The first forgetting: as many forgotten as forgotten so far.
    const forgotten = shell.connection.ledgerSize().forgotten
    expect(forgotten).toBeGreaterThan(0)
    expect(message).toBe(ConnectionShell.forgottenWarning(forgotten))
    expect(message).toContain(`more than ${Ledger.MAX_REQUESTS} wait`)
    expect(annotations).toEqual({ forgotten })
  })
})

describe("ConnectionShell: a transport that cannot pause", () => {
  it("attached with pausable false, it is bounded by the connection: past 2 x bufferSize waiting, the attempt ends with Overflow", () => {
    const shell = new Shell(options, ConnectionShell.classifier)
    const attempt = new Attempt(shell, shell.begin())
    shell.current = attempt
    attempt.attach(new Io(), false)
    attempt.open()
    for (let i = 0; i < 12; i++) attempt.frame(`{"_tag":"Started","n":${i}}`)
    expect(shell.events.length).toBe(8)
    expect(shell.connection.endingOf(attempt.id)).toEqual({ _tag: "Overflow", limit: 8 })
  })

  it("attached as a pausable transport (the default), the same frames are all taken", () => {
    const { attempt, io, shell } = started()
    attempt.open()
    for (let i = 0; i < 12; i++) attempt.frame(`{"_tag":"Started","n":${i}}`)
    expect([shell.events.length, shell.connection.phase(attempt.id), io.calls]).toEqual([12, "open", ["pause"]])
  })
})

describe("ConnectionShell: start and finish", () => {
  it("starts once; not once finished", () => {
    const shell = new Shell(options, ConnectionShell.classifier)
    expect(shell.start()).toBe(true)
    expect(shell.start()).toBe(false)
    const closed = new Shell(options, ConnectionShell.classifier)
    expect(closed.finish("closed-by-caller")).toEqual({ closed: { reason: "closed-by-caller" }, warning: undefined })
    expect(closed.start()).toBe(false)
    expect(closed.finish("closed-by-caller")).toBe(undefined)
  })

  it("the end: the answers not sent in the Closed state and a warning; the attempt forgotten", () => {
    const { attempt, shell } = started()
    attempt.open()
    attempt.frame(JSON.stringify(request("a")))
    shell.answer(request("a"), "frame-a", data(true))
    const finished = shell.finish("connection-lost")
    expect(finished?.closed).toEqual({
      reason: "connection-lost",
      unsent: [{ resourceType: "request_user_input", actionSessionId: "a" }]
    })
    expect(finished?.warning).toBe(
      "1 answer(s) not sent (or not confirmed): the event channel closed (connection-lost)"
    )
    expect(shell.current).toBe(undefined)
    expect(shell.answer(request("a"), "frame-a", data(true))).toBe("channel-closed")
  })
})

describe("ConnectionShell.scrubFrameError", () => {
  type Built = ConnectionShell.FrameFailure & { readonly built?: true }
  const make: ConnectionShell.FrameErrors<Built> = {
    MalformedFrame: (fields) => ({ _tag: "MalformedFrame", ...fields, built: true }),
    EventDecodeError: (fields) => ({ _tag: "EventDecodeError", ...fields, built: true }),
    UnknownEvent: (fields) => ({ _tag: "UnknownEvent", ...fields, built: true })
  }

  it("the same error when the key is not in it (or there is no key)", () => {
    const error: Built = { _tag: "MalformedFrame", raw: "{", message: "bad" }
    expect(ConnectionShell.scrubFrameError(error, "sk-1", make)).toBe(error)
    const withKey: Built = { _tag: "MalformedFrame", raw: "sk-1", message: "bad" }
    expect(ConnectionShell.scrubFrameError(withKey, "", make)).toBe(withKey)
    const tooLarge: Built = { _tag: "FrameTooLarge" }
    expect(ConnectionShell.scrubFrameError(tooLarge, "sk-1", make)).toBe(tooLarge)
  })

  it("built again without the key, in every field that carries the service's text", () => {
    expect(
      ConnectionShell.scrubFrameError({ _tag: "MalformedFrame", raw: "a sk-1", message: "b sk-1" }, "sk-1", make)
    ).toEqual({ _tag: "MalformedFrame", raw: "a <redacted>", message: "b <redacted>", built: true })
    expect(
      ConnectionShell.scrubFrameError(
        { _tag: "EventDecodeError", event: "action_run", raw: "sk-1", message: "m" },
        "sk-1",
        make
      )
    ).toEqual({ _tag: "EventDecodeError", event: "action_run", raw: "<redacted>", message: "m", built: true })
    expect(
      ConnectionShell.scrubFrameError({ _tag: "UnknownEvent", event: "x-sk-1", raw: "{}" }, "sk-1", make)
    ).toEqual({ _tag: "UnknownEvent", event: "x-<redacted>", raw: "{}", built: true })
  })
})

describe("ConnectionShell: what the connection logs", () => {
  const retry = (schedule: "first-connect" | "reconnect") =>
    ({
      _tag: "Retry",
      schedule,
      reset: false,
      giveUp: false,
      attempts: 2,
      resent: 0,
      lastError: "read failed: boom",
      error: "read failed: boom",
      replayDropped: 0
    }) as const

  it("an open and a reopen; a retry, said as not open yet for a connection never open", () => {
    expect(ConnectionShell.openedLog({ reconnects: 0, reopened: false, downtimeMillis: undefined })).toBe(
      "Event channel open"
    )
    expect(ConnectionShell.openedLog({ reconnects: 2, reopened: true, downtimeMillis: 10 })).toBe(
      "Event channel reopened"
    )
    expect(ConnectionShell.retryLog<Failure, Failure>(retry("first-connect"))).toBe(
      "Event channel not open yet: read failed: boom"
    )
    expect(ConnectionShell.retryLog<Failure, Failure>(retry("reconnect"))).toBe(
      "Event channel attempt ended: read failed: boom"
    )
  })

  it("answers sent again, a replay dropped, the close", () => {
    expect(ConnectionShell.resentLog(3)).toBe("3 answer(s) written just before the drop will be sent again")
    expect(ConnectionShell.replayDroppedLog(4)).toBe("4 event(s) sent again after the reconnect were dropped (a replay)")
    expect(ConnectionShell.closedLog("complete")).toBe("Event channel closed: complete")
  })
})
