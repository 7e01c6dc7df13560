import { describe, expect, it } from "vitest"
import { Session } from "effect-agent-session-core"
import { Script } from "../src/index.js"

/** Events as wire names, a request's key after a colon (`external_resource_requested:k`). */
type Event = string
const classifier = {
  kind: (event: Event) => Session.kindOf(event.split(":")[0] ?? ""),
  requestKey: (event: Event) => event.split(":")[1] ?? ""
}
const request = (key: string): Event => `external_resource_requested:${key}`
type Step = Script.Step<Event, { readonly _tag: string }, number>

const play = (steps: ReadonlyArray<Step> = [], endOnError?: boolean) =>
  new Script.Play<Event, { readonly _tag: string }, number, string>(steps, classifier, { endOnError })

describe("Script.Play: the steps played", () => {
  it("keeps the steps before the first End", () => {
    const steps: ReadonlyArray<Step> = [
      { _tag: "Emit", event: "action_run" },
      { _tag: "Sleep", duration: 1 },
      { _tag: "End" },
      { _tag: "Emit", event: "complete" },
      { _tag: "End" }
    ]
    expect(play(steps).steps).toEqual(steps.slice(0, 2))
    expect(play(steps.slice(0, 2)).steps).toEqual(steps.slice(0, 2))
    expect(play([{ _tag: "End" }]).steps).toEqual([])
  })
})

describe("Script.steps", () => {
  it("builds each step; awaitAnswer echoes by default", () => {
    const Step = Script.steps<Event, { readonly _tag: string }, number>()
    expect(Step.emit("complete")).toEqual({ _tag: "Emit", event: "complete" })
    expect(Step.fail({ _tag: "ConnectionLost" })).toEqual({ _tag: "Fail", error: { _tag: "ConnectionLost" } })
    expect(Step.awaitAnswer()).toEqual({ _tag: "AwaitAnswer", echo: true })
    expect(Step.awaitAnswer({})).toEqual({ _tag: "AwaitAnswer", echo: true })
    expect(Step.awaitAnswer({ echo: false })).toEqual({ _tag: "AwaitAnswer", echo: false })
    expect(Step.end).toEqual({ _tag: "End" })
  })
})

describe("Script.Play: answers against the requests emitted", () => {
  it("an answer to a request never emitted is never-received; a second answer already-answered", () => {
    const p = play()
    expect(p.answer("k", "a")).toEqual({ _tag: "NotPending", reason: "never-received" })
    p.emit(request("k"))
    expect(p.answer("k", "a")).toEqual({ _tag: "Accepted", wakes: false })
    expect(p.answer("k", "b")).toEqual({ _tag: "NotPending", reason: "already-answered" })
  })

  it("a request emitted again is pending again", () => {
    const p = play()
    p.emit(request("k"))
    p.answer("k", "a")
    p.emit(request("k"))
    expect(p.awaitAnswer()).toEqual({ _tag: "Waiting" })
    expect(p.answer("k", "b")).toEqual({ _tag: "Accepted", wakes: true })
    expect(p.awaitAnswer()).toEqual({ _tag: "Answered", answer: "b" })
  })

  it("other events are not requests", () => {
    const p = play()
    p.emit("action_run")
    p.emit("complete")
    expect(p.awaitAnswer()).toEqual({ _tag: "NoRequest" })
    expect(p.answer("", "a")).toEqual({ _tag: "NotPending", reason: "never-received" })
  })

  it("AwaitAnswer waits for the latest request only; an answer given before goes on at once", () => {
    const p = play()
    expect(p.awaitAnswer()).toEqual({ _tag: "NoRequest" })
    p.emit(request("a"))
    p.emit(request("b"))
    expect(p.answer("b", "early")).toEqual({ _tag: "Accepted", wakes: false })
    expect(p.awaitAnswer()).toEqual({ _tag: "Answered", answer: "early" })
    p.emit(request("c"))
    expect(p.awaitAnswer()).toEqual({ _tag: "Waiting" })
    // An older request's answer does not wake the step.
    expect(p.answer("a", "old")).toEqual({ _tag: "Accepted", wakes: false })
    expect(p.answer("c", "late")).toEqual({ _tag: "Accepted", wakes: true })
    expect(p.awaitAnswer()).toEqual({ _tag: "Answered", answer: "late" })
  })
})

describe("Script.Play: the end and its reason", () => {
  it("complete ends the events; an error event only with endOnError", () => {
    const p = play()
    expect(p.delivered("action_run")).toBe(false)
    expect(p.delivered("error")).toBe(false)
    expect(p.delivered("complete")).toBe(true)
    expect(p.closed(undefined)).toBe("complete")
    const q = play([], true)
    expect(q.delivered("error")).toBe(true)
    expect(q.closed(undefined)).toBe("error-event")
  })

  it("the script ran out: closed-by-service; ended otherwise (closed early): closed-by-caller", () => {
    const p = play()
    expect(p.closed(undefined)).toBe("closed-by-caller")
    p.ranOut()
    expect(p.closed(undefined)).toBe("closed-by-service")
  })

  it("a failure: the reason the real channel gives for its error", () => {
    const p = play()
    p.ranOut()
    expect(p.closed({ error: undefined })).toBe("closed-by-caller")
    expect(p.closed({ error: { _tag: "ConnectionLost" } })).toBe("connection-lost")
    expect(p.closed({ error: { _tag: "NeverConnected" } })).toBe("connection-lost")
    expect(p.closed({ error: { _tag: "HandshakeRejected" } })).toBe("handshake-rejected")
    expect(p.closed({ error: { _tag: "Superseded" } })).toBe("superseded")
    expect(p.closed({ error: { _tag: "FrameError" } })).toBe("failed")
    expect(p.closed({ error: { _tag: "CredentialsError" } })).toBe("failed")
  })
})

type Types = {
  readonly step: string
  readonly onboard: { readonly name: string }
  readonly create: { readonly n: number }
  readonly onboardError: string
  readonly createError: string
  readonly answer: string
}

describe("Script.World: the scripted service", () => {
  it("created sessions: test-session, then test-session-2, ...; a failed call is not recorded nor counted", () => {
    const world = new Script.World<Types>({ script: ["a"] })
    expect(world.create({ n: 1 })).toEqual({
      _tag: "Succeeded",
      value: { session_id: "test-session", status: "started", start_time: "1970-01-01T00:00:00.000Z" }
    })
    world.failNextCreate("busy")
    expect(world.create({ n: 2 })).toEqual({ _tag: "Failed", error: "busy" })
    const second = world.create({ n: 3 })
    expect(second._tag === "Succeeded" && second.value.session_id).toBe("test-session-2")
    expect(world.sessionsCreated).toEqual([{ n: 1 }, { n: 3 }])
  })

  it("the session id of the options is every session's", () => {
    const world = new Script.World<Types>({ script: [], sessionId: "s" })
    world.create({ n: 1 })
    const second = world.create({ n: 2 })
    expect(second._tag === "Succeeded" && second.value.session_id).toBe("s")
  })

  it("onboard: the agent's id and key by name; the next failure on demand, once", () => {
    const world = new Script.World<Types>({ script: [] })
    world.failNextOnboard("no")
    expect(world.onboard({ name: "a" })).toEqual({ _tag: "Failed", error: "no" })
    expect(world.onboard({ name: "a" })).toEqual({
      _tag: "Succeeded",
      value: { agentId: "test-agent-a", apiKey: "test-agent-key-a" }
    })
    expect(world.agentsOnboarded).toEqual([{ name: "a" }])
  })

  it("a replay's create: the failure taken before, the request recorded after", () => {
    const world = new Script.World<Types>({ script: [] })
    expect(world.beforeCreate()).toBeUndefined()
    world.failNextCreate("x")
    expect(world.beforeCreate()).toEqual({ error: "x" })
    expect(world.beforeCreate()).toBeUndefined()
    world.created({ n: 1 })
    expect(world.sessionsCreated).toEqual([{ n: 1 }])
  })

  it("keeps no sessions; records connections, answers and the script; earlier readings do not change", () => {
    const world = new Script.World<Types>({ script: ["a"] })
    expect(world.getSession("s1")).toEqual({
      message: "The test layer keeps no sessions to retrieve (s1)",
      operation: "AgentApi.getSession"
    })
    const before = world.answers
    world.connected("s1")
    world.answered("yes")
    world.setScript(["b"])
    expect(before).toEqual([])
    expect(world.connections).toEqual(["s1"])
    expect(world.answers).toEqual(["yes"])
    expect(world.script).toEqual(["b"])
  })
})

describe("Script.typical: the test kit's default session", () => {
  const tags = (steps: ReadonlyArray<Script.Step<Script.TypicalEvent, never, never>>) =>
    steps.map((step) => (step._tag === "Emit" ? step.event._tag : step._tag))

  it("started, browser, thoughts and an action per action, complete at one cent an action", () => {
    const steps = Script.typical()
    expect(tags(steps)).toEqual([
      "Started",
      "BrowserStarted",
      ...Array.from({ length: 3 }, () => ["ThoughtsAndMemories", "ActionRun"]).flat(),
      "Complete"
    ])
    expect(steps[0]).toEqual({ _tag: "Emit", event: { _tag: "Started", sessionId: "test-session", start_url: "https://example.com" } })
    expect(steps[3]).toEqual({
      _tag: "Emit",
      event: { _tag: "ActionRun", name: "action-1", action_session_id: "test-action-session", content: "Doing step 1" }
    })
    expect(steps.at(-1)).toEqual({
      _tag: "Emit",
      event: { _tag: "Complete", response: "Done", type: "STRING", total_cost: 0.03, session_id: "test-session" }
    })
  })

  it("a request halfway (after action ceil(n/2)), then the wait for its answer", () => {
    const steps = Script.typical({ actions: 3, ask: "input", sessionId: "s", response: "ok", type: "JSON" })
    expect(tags(steps).slice(4, 10)).toEqual([
      "ThoughtsAndMemories",
      "ActionRun",
      "ExternalResourceRequested",
      "AwaitAnswer",
      "ThoughtsAndMemories",
      "ActionRun"
    ])
    expect(steps[6]).toEqual({
      _tag: "Emit",
      event: {
        _tag: "ExternalResourceRequested",
        resource_type: "request_user_input",
        reason: "Need an email address",
        action_session_id: "test-action-session",
        field_name: "email"
      }
    })
    expect(steps[7]).toEqual({ _tag: "AwaitAnswer", echo: true })
    const permission = Script.typical({ actions: 1, ask: "permission" })
    expect(permission[4]).toMatchObject({
      event: { resource_type: "admin_permission_request", reason: "May I submit the form?", field_name: undefined }
    })
    expect(tags(Script.typical({ ask: "none" }))).not.toContain("ExternalResourceRequested")
    expect(steps.at(-1)).toMatchObject({ event: { response: "ok", type: "JSON", session_id: "s" } })
  })
})
