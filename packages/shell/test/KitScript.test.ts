/**
 * The test kit's scripted connection as both editions bind it (the core's shell `KitScript`): the
 * world's script played once, the connection reported when its events start, each answer matched
 * against the requests emitted (by the protocol's request key) and reported to the world only when
 * accepted, else the fields of the edition's `RequestNotPending`.
 */
import { assert, describe, it } from "vitest"
import { KitScript, type Script } from "../src/index.js"

type Request = {
  readonly _tag: "ExternalResourceRequested"
  readonly action_session_id: string
  readonly resource_type: string | { readonly raw: string }
}
type Event =
  | Request
  | { readonly _tag: "Complete" }
  | { readonly _tag: "ActionRun" }
  | { readonly _tag: "ExternalResourceGranted"; readonly answer: string }
type Step = Script.Step<Event, never, number>

const input: Request = { _tag: "ExternalResourceRequested", action_session_id: "as-1", resource_type: "request_user_input" }
const unknownType: Request = { _tag: "ExternalResourceRequested", action_session_id: "as-2", resource_type: { raw: "fax" } }

const worldOf = (script: ReadonlyArray<Step>) => {
  const trace: Array<string> = []
  const world: KitScript.World<Event, never, number, Request, string> = {
    script,
    connected: (sessionId) => trace.push(`connected ${sessionId}`),
    answered: (answer) => trace.push(`answered ${answer.sessionId} ${answer.request.action_session_id} ${answer.answer}`)
  }
  return { trace, world }
}

describe("KitScript.Connection", () => {
  it("plays the world's script up to its first End, and reports the connection when its events start", () => {
    const { trace, world } = worldOf([
      { _tag: "Emit", event: { _tag: "ActionRun" } },
      { _tag: "End" },
      { _tag: "Emit", event: { _tag: "Complete" } }
    ])
    const connection = new KitScript.Connection(world, "s-1")
    assert.deepStrictEqual(connection.play.steps, [{ _tag: "Emit", event: { _tag: "ActionRun" } }])
    assert.deepStrictEqual(trace, [])
    connection.opened()
    assert.deepStrictEqual(trace, ["connected s-1"])
  })

  it("an answer to a request never emitted is not pending (the error's fields), and the world is not told", () => {
    const { trace, world } = worldOf([])
    const connection = new KitScript.Connection(world, "s-1")
    assert.deepStrictEqual(connection.respond(unknownType, "yes"), {
      _tag: "NotPending",
      error: { resourceType: "fax", actionSessionId: "as-2", reason: "never-received" }
    })
    assert.deepStrictEqual(trace, [])
  })

  it("an answer to a request emitted is accepted and reported once; a second one is already answered", () => {
    const { trace, world } = worldOf([{ _tag: "Emit", event: input }])
    const connection = new KitScript.Connection(world, "s-1")
    connection.play.emit(input)
    assert.deepStrictEqual(connection.respond(input, "yes"), { _tag: "Accepted", wakes: false })
    assert.deepStrictEqual(trace, ["answered s-1 as-1 yes"])
    assert.deepStrictEqual(connection.respond(input, "again"), {
      _tag: "NotPending",
      error: { resourceType: "request_user_input", actionSessionId: "as-1", reason: "already-answered" }
    })
    assert.deepStrictEqual(trace, ["answered s-1 as-1 yes"])
  })

  it("answers are matched by the request's key: another request's answer does not wake the wait for the latest", () => {
    const { trace, world } = worldOf([])
    const connection = new KitScript.Connection(world, "s-1")
    connection.play.emit(unknownType)
    connection.play.emit(input)
    assert.deepStrictEqual(connection.play.awaitAnswer(), { _tag: "Waiting" })
    assert.deepStrictEqual(connection.respond(unknownType, "first"), { _tag: "Accepted", wakes: false })
    assert.deepStrictEqual(connection.respond(input, "second"), { _tag: "Accepted", wakes: true })
    assert.deepStrictEqual(trace, ["answered s-1 as-2 first", "answered s-1 as-1 second"])
  })

  it("next: the steps in order, a request pending once emitted, and the script running out as Done", () => {
    const { world } = worldOf([
      { _tag: "Emit", event: { _tag: "ActionRun" } },
      { _tag: "Sleep", duration: 5 },
      { _tag: "Emit", event: input },
      { _tag: "End" },
      { _tag: "Emit", event: { _tag: "Complete" } }
    ])
    const connection = new KitScript.Connection(world, "s-1")
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: { _tag: "ActionRun" } })
    assert.deepStrictEqual(connection.next(), { _tag: "Sleep", duration: 5 })
    assert.strictEqual(connection.respond(input, "early")._tag, "NotPending")
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: input })
    assert.deepStrictEqual(connection.respond(input, "yes"), { _tag: "Accepted", wakes: false })
    assert.deepStrictEqual(connection.next(), { _tag: "Done" })
    // The script ran out: the service closed the channel.
    assert.strictEqual(connection.play.closed(undefined), "closed-by-service")
  })

  it("next: a Fail step is returned as it is", () => {
    const world: KitScript.World<Event, string, number, Request, string> = {
      script: [{ _tag: "Fail", error: "lost" }],
      connected: () => {},
      answered: () => {}
    }
    const connection = new KitScript.Connection(world, "s-1")
    assert.deepStrictEqual(connection.next(), { _tag: "Fail", error: "lost" })
  })

  it("next: AwaitAnswer waits for the latest request's answer, then echoes it; without a request it goes on", () => {
    const { world } = worldOf([
      { _tag: "AwaitAnswer", echo: true },
      { _tag: "Emit", event: input },
      { _tag: "AwaitAnswer", echo: true },
      { _tag: "AwaitAnswer", echo: true },
      { _tag: "AwaitAnswer", echo: false },
      { _tag: "Emit", event: { _tag: "Complete" } }
    ])
    const connection = new KitScript.Connection(world, "s-1", {
      echo: (answer) => ({ _tag: "ExternalResourceGranted", answer })
    })
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: input })
    assert.deepStrictEqual(connection.next(), { _tag: "Wait" })
    // Asked again before the answer: still waiting.
    assert.deepStrictEqual(connection.next(), { _tag: "Wait" })
    assert.deepStrictEqual(connection.respond(input, "yes"), { _tag: "Accepted", wakes: true })
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: { _tag: "ExternalResourceGranted", answer: "yes" } })
    // The latest request is answered already: echoed at once, or (without echo) nothing.
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: { _tag: "ExternalResourceGranted", answer: "yes" } })
    assert.deepStrictEqual(connection.next(), { _tag: "Emit", event: { _tag: "Complete" } })
    assert.deepStrictEqual(connection.next(), { _tag: "Done" })
  })

  it("next: an echo without an echo option emits nothing", () => {
    const { world } = worldOf([{ _tag: "Emit", event: input }, { _tag: "AwaitAnswer", echo: true }])
    const connection = new KitScript.Connection(world, "s-1")
    connection.next()
    connection.respond(input, "yes")
    assert.deepStrictEqual(connection.next(), { _tag: "Done" })
  })
})
