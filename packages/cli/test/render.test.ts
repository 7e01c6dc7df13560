/**
 * The renderers of `run`, in process: the bar, the live block redrawn in place, the outcome per
 * response type, NDJSON, and the answer policy.
 */
import { assert, describe, expect, it, vi } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type { Outcome } from "effect-agent-session/AgentSessions"
import { extractLogLevel, noticeLogger } from "../src/Cli.js"
import { decide } from "../src/Run.js"
import { createdNotice, takeoverNotice } from "../src/Cluster.js"
import * as ExitCode from "../src/ExitCode.js"
import * as Render from "../src/Render.js"
import * as Errors from "effect-agent-session/Errors"
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import { ConnectionState } from "effect-agent-session/EventStream"
import { ActionSessionId, SessionId } from "effect-agent-session/Session"
import type * as SessionEvent from "effect-agent-session/SessionEvent"

const capture = (columns = 80) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const sink = Render.sinkOf({ out: (t) => void out.push(t), err: (t) => void err.push(t), columns: () => columns })
  return { sink, out: () => out.join(""), err: () => err.join("") }
}

const action = (n: number): SessionEvent.ActionRun => ({
  _tag: "ActionRun",
  name: `step${n}`,
  action_session_id: ActionSessionId.make("as-1"),
  content: `doing thing number ${n} ` + "x".repeat(200)
})

const complete = (type: SessionEvent.ResponseType, response: string): SessionEvent.Complete => ({
  _tag: "Complete",
  response,
  type,
  total_cost: Option.some(0.5),
  cost_summary: Option.none(),
  session_id: SessionId.make("s-1")
})

const outcomeOf = (event: SessionEvent.Complete): Outcome => ({
  sessionId: SessionId.make("s-1"),
  response: event.response,
  type: event.type,
  totalCost: Render.formatCost(event.total_cost) === "0.5" ? Option.some(0.5) : Option.none(),
  actions: 2,
  maxActions: 2,
  events: [],
  complete: event,
  budgetExceeded: Option.none()
})

const request = (
  resource_type: SessionEvent.ResourceType,
  field?: string
): SessionEvent.ExternalResourceRequested => ({
  _tag: "ExternalResourceRequested",
  resource_type,
  reason: "needs it",
  action_session_id: ActionSessionId.make("as-1"),
  field_name: Option.fromNullable(field)
})

describe("cli rendering", () => {
  it("bar fills in proportion and ends at n/n", () => {
    expect(Render.bar(0, 4, 8)).toBe("[░░░░░░░░] 0/4")
    expect(Render.bar(2, 4, 8)).toBe("[████░░░░] 2/4")
    expect(Render.bar(4, 4, 8)).toBe("[████████] 4/4")
    expect(Render.bar(6, 4, 8)).toBe("[████████] 6/4")
  })

  it("renderResponse pretty-prints JSON, keeps Markdown and strings, and keeps JSON that does not parse", () => {
    expect(Render.renderResponse(outcomeOf(complete("JSON", `{"a":[1,2]}`)))).toBe(`{\n  "a": [\n    1,\n    2\n  ]\n}`)
    expect(Render.renderResponse(outcomeOf(complete("MARKDOWN", "# Title\n\n- x")))).toBe("# Title\n\n- x")
    expect(Render.renderResponse(outcomeOf(complete("STRING", "plain")))).toBe("plain")
    expect(Render.renderResponse(outcomeOf(complete("JSON", "{oops")))).toBe("{oops")
    expect(Render.formatCost(Option.none())).toBe("not reported")
  })

  it.effect("the live block is redrawn in place, never wider than the terminal, and ends at n/n", () =>
    Effect.gen(function*() {
      const { out, sink } = capture(60)
      const reporter = Render.live(sink, { color: false })
      const progress = Render.makeProgress(2)
      yield* reporter.created("s-1", progress)
      for (const n of [1, 2]) {
        const event = action(n)
        Render.track(progress, event)
        yield* reporter.event(event, progress)
      }
      const text = out()
      // Each redraw moves up over the three lines of the block and clears below.
      expect(text.split("\x1b[3F\x1b[J").length - 1).toBeGreaterThanOrEqual(2)
      const lastBlock = text.slice(text.lastIndexOf("\x1b[J") + 3)
      expect(lastBlock).toContain("] 2/2 actions")
      for (const line of lastBlock.split("\n")) {
         
        assert.isAtMost(Array.from(line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")).length, 60, line)
      }
      yield* reporter.outcome(outcomeOf(complete("STRING", "done")), progress)
      expect(out()).toContain("Outcome (STRING):\ndone")
      expect(out()).toContain("\x1b[?25h")
    }))

  it.effect("plain lines show reconnects; NDJSON encodes events as {event, data}", () =>
    Effect.gen(function*() {
      const plain = capture()
      const progress = Render.makeProgress(3)
      const reporter = Render.plain(plain.sink)
      const states = [
        ConnectionState.Open({ reconnects: 0, downtime: Option.none() }),
        ConnectionState.Reconnecting({ attempt: 1, lastError: "closed with code 1006" }),
        ConnectionState.Open({ reconnects: 1, downtime: Option.none() })
      ]
      for (const state of states) {
        if (Render.trackState(progress, state)) yield* reporter.state(state, progress)
      }
      expect(plain.out()).toBe(
        "connection lost, reconnecting (attempt 1): closed with code 1006\nreconnected (1 so far)\n"
      )
      expect(progress.reconnects).toBe(1)

      const json = capture()
      const event = action(1)
      Render.track(progress, event)
      yield* Render.json(json.sink).event(event, progress)
      const parsed = JSON.parse(json.out()) as Record<string, unknown>
      expect(parsed["event"]).toBe("action_run")
      expect(parsed["tag"]).toBe("ActionRun")
      expect(parsed["data"]).toEqual({ name: "step1", action_session_id: "as-1", content: event.content })
      expect(parsed["action"]).toBe(1)
    }))

  it.effect("the outcome of attach counts the actions this watch saw, and says so beside the session's cost", () =>
    Effect.gen(function*() {
      const outcome = { ...outcomeOf(complete("STRING", "done")), actions: 4, maxActions: 5 }
      const attached = capture()
      const progress = Render.makeProgress(5, { attached: true })
      yield* Render.plain(attached.sink).outcome(outcome, progress)
      expect(attached.out()).toContain("Total cost: 0.5\nActions seen: 4 of max 5 (this watch only; the cost is the whole session's)\n")
      const unknownMax = capture()
      yield* Render.plain(unknownMax.sink).outcome(outcome, Render.makeProgress(undefined, { attached: true }))
      expect(unknownMax.out()).toContain("Actions seen: 4 (this watch only; the cost is the whole session's)\n")
      // A session this command created and watched from its start: every action was seen.
      const created = capture()
      yield* Render.plain(created.sink).outcome(outcome, Render.makeProgress(5))
      expect(created.out()).toContain("Total cost: 0.5\nActions: 4/5\n")
      Render.track(progress, action(1))
      progress.sessionId = Option.some("s-1")
      const stopped = capture()
      yield* Render.plain(stopped.sink).interrupted(progress)
      expect(stopped.out()).toContain("Done so far: 1 of max 5 actions seen by this watch, 1 events, 0 reconnects\n")
    }))

  it("submit names a session it created and stopped following, with the watch that follows it", () => {
    expect(createdNotice("ses_1 x")).toBe(
      "session ses_1 x was created at the service and may still be running on the cluster; follow it with: effect-agent-session watch 'ses_1 x'"
    )
  })

  it("a take-over is shown when the runner holding the session changes, not when it is first learnt", () => {
    expect(takeoverNotice(Option.none(), Option.some("127.0.0.1:1"))).toEqual(Option.none())
    expect(takeoverNotice(Option.some("127.0.0.1:1"), Option.none())).toEqual(Option.none())
    expect(takeoverNotice(Option.some("127.0.0.1:1"), Option.some("127.0.0.1:1"))).toEqual(Option.none())
    expect(takeoverNotice(Option.some("127.0.0.1:1"), Option.some("127.0.0.1:2"))).toEqual(
      Option.some("runner 127.0.0.1:2 took the session over (it was on 127.0.0.1:1)")
    )
  })

  it.effect("by default the log shows warnings and notices (a runner's take-over) as lines, not logfmt", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
        written.push(String(chunk))
        return true
      })
      yield* Effect.gen(function*() {
        yield* Effect.logInfo("Event channel not open yet")
        yield* Effect.logInfo("Took session ses_1 over at seq 4 (runner 127.0.0.1:2)").pipe(
          Effect.annotateLogs("notice", "takeover")
        )
        yield* Effect.logWarning("1 answer(s) not sent").pipe(Effect.annotateLogs("sessionId", "ses_1"))
      }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, noticeLogger)),
        Logger.withMinimumLogLevel(LogLevel.Info),
        Effect.ensuring(Effect.sync(() => write.mockRestore()))
      )
      expect(written.join("")).toBe(
        "info: Took session ses_1 over at seq 4 (runner 127.0.0.1:2)\n" +
          "warning: 1 answer(s) not sent (sessionId=ses_1)\n"
      )
    }))

  it.effect("the answer policy: flags first, deny without a terminal", () =>
    Effect.gen(function*() {
      const none = { approve: false, deny: false, input: Option.none<string>(), interactive: false }
      const input = request("request_user_input", "email")
      const permission = request("admin_permission_request")
      // Nothing here prompts; the prompt's environment is provided for the types only.
      const decided = (policy: typeof none, r: SessionEvent.ExternalResourceRequested) =>
        decide(policy, r).pipe(
          Effect.map(({ answer, source }) => [answer._tag, answer._tag === "Grant" ? Option.getOrNull(answer.input) : null, source]),
          Effect.provide(NodeContext.layer)
        )
      const cases: Array<[typeof none, SessionEvent.ExternalResourceRequested, unknown]> = [
        [none, input, ["Deny", null, "no-terminal"]],
        [none, permission, ["Deny", null, "no-terminal"]],
        [{ ...none, deny: true, input: Option.some("x") }, input, ["Deny", null, "flag"]],
        [{ ...none, input: Option.some("me@example.com") }, input, ["Grant", "me@example.com", "flag"]],
        [{ ...none, approve: true }, input, ["Grant", null, "flag"]],
        [{ ...none, approve: true }, permission, ["Grant", null, "flag"]],
        [{ ...none, input: Option.some("x") }, permission, ["Deny", null, "no-terminal"]]
      ]
      for (const [policy, r, expected] of cases) {
        const result = yield* decided(policy, r)
        expect(result).toEqual(expected)
      }
    }))

  it("exit codes per error family", () => {
    const code = (e: Errors.AgentSessionError) => ExitCode.forError(e)
    expect(code(new Errors.MissingCredentials({ operation: "createSession", variable: "AGENT_SESSION_API_KEY" }))).toBe(2)
    expect(code(new Errors.InvalidRequest({ subject: "x", message: "y" }))).toBe(2)
    expect(code(new Errors.HandshakeRejected({ code: 1008, reason: "" }))).toBe(3)
    expect(code(new Errors.MissingAgentKey({ agentId: "a" }))).toBe(3)
    expect(code(new Errors.ConnectionLost({ attempts: 3, lastError: "x" }))).toBe(5)
    expect(code(new Errors.TransportError({ operation: "x", message: "y" }))).toBe(5)
    expect(code(new Errors.ActionBudgetExceeded({ sessionId: "s", maxActions: 1, actions: 2 }))).toBe(6)
    expect(code(new Errors.SessionEndedWithoutComplete({ sessionId: "s", lastError: Option.none() }))).toBe(7)
    expect(code(new Errors.MalformedFrame({ raw: "", message: "" }))).toBe(8)
    expect(ExitCode.classify(new ExitCode.UsageError({ message: "m" }))).toEqual({ code: 2, message: "m" })
    expect(ExitCode.classify({ _tag: "QuitException" }).code).toBe(130)
    // A superseded watcher says who took the session, and that it stopped rather than take it back.
    const superseded = ExitCode.classify(new Errors.Superseded({ sessionId: "s", reason: "superseded by a newer connection" }))
    expect(superseded.code).toBe(8)
    expect(superseded.message).toContain("another watcher took the session")
    expect(superseded.message).toContain("superseded by a newer connection")
    // The cluster's errors are outside the core union, still an error of the service's side.
    expect(ExitCode.classify(new ClusterErrors.ClusterUnavailable({ operation: "events", sessionId: "s", message: "no runner" })))
      .toEqual({ code: 8, message: "ClusterUnavailable: no runner" })
    expect(ExitCode.classify(new ClusterErrors.EventLogError({ operation: "append", message: "down" })).code).toBe(8)
    expect(ExitCode.describe(new Errors.MissingCredentials({ operation: "x", variable: "AGENT_SESSION_API_KEY" })))
      .toContain("AGENT_SESSION_API_KEY")
  })
})

describe("--log-level", () => {
  it("is taken out wherever it is, as --log-level X or --log-level=X; names and Effect's labels", () => {
    const parsed = (args: ReadonlyArray<string>) => extractLogLevel(args, undefined)
    const ok = (args: ReadonlyArray<string>) => Either.getOrThrow(parsed(args))
    assert.deepStrictEqual(ok(["run", "--goal", "g", "--log-level", "debug"]).args, ["run", "--goal", "g"])
    assert.strictEqual(ok(["run", "--log-level=warning"]).level, LogLevel.Warning)
    assert.strictEqual(ok(["--log-level", "warn", "run"]).level, LogLevel.Warning)
    assert.strictEqual(ok(["run", "--log-level=none"]).level, LogLevel.None)
    assert.strictEqual(ok(["run"]).level, LogLevel.Warning)
    assert.deepStrictEqual(ok(["run", "--", "--log-level", "debug"]).args, ["run", "--", "--log-level", "debug"])
    assert.strictEqual(Either.getOrThrow(extractLogLevel(["run"], "debug")).level, LogLevel.Debug)
    assert.isTrue(Either.isLeft(parsed(["run", "--log-level", "loud"])))
    assert.isTrue(Either.isLeft(parsed(["run", "--log-level"])))
  })
})
