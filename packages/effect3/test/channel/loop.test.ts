/**
 * The connection loop (binding/internal/channel/loop.ts) over the protocol core's `Connection`,
 * driven directly: a scripted transport begins, opens, delivers and ends each attempt on a real
 * shell (whose core decides; nothing is sent), the loop runs its steps and the schedules on the
 * `TestClock`, its host records how the connection ended, and the state is a real
 * `SubscriptionRef` whose every change is recorded.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import type * as Credentials from "../../src/Credentials.js"
import { ConnectionLost, ConnectTimeout, type EventStreamError, HandshakeRejected, NeverConnected } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Wire from "../../src/Wire.js"
import { writer } from "../../binding/internal/channel/answers.js"
import { EventBuffer } from "../../binding/internal/channel/buffer.js"
import * as Deadlines from "../../binding/internal/channel/deadlines.js"
import { type Final, Loop } from "../../binding/internal/channel/loop.js"
import { resolveSettings } from "../../binding/internal/channel/settings.js"
import { Shell } from "../../binding/internal/channel/shell.js"
import { ConnectionState } from "../../binding/internal/channel/state.js"
import { type AttemptOutcome, End, Fatal, type Io, Retry, type Transport } from "../../binding/internal/channel/transport.js"

/** A frame of a new event (progress: it resets the bout), a different one each attempt (not a replay). */
const progressFrame = (attempt: number): string =>
  JSON.stringify({ event: "thoughts_and_memories", data: { thought: `t${attempt}`, memory: "m" } })

/** One scripted attempt. */
interface Step {
  readonly outcome: AttemptOutcome
  /** It opened (after `openAfter` ms): the loop publishes the open once it sees it. */
  readonly opened?: boolean
  readonly openAfter?: number
  /** It delivered a new event. */
  readonly alive?: boolean
  /** How long it lasted (ms) after opening, before its outcome. */
  readonly lasts?: number
}

const drop = (error = "closed with code 1006"): Step => ({ outcome: Retry(error), opened: true })
const live = (error = "closed with code 1006"): Step => ({ outcome: Retry(error), opened: true, alive: true })
const refused = (error = "open failed: ECONNREFUSED"): Step => ({ outcome: Retry(error) })

/** Three retries 100 ms apart. */
const threeRetries = Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(3)))

/** A transport's connection that nothing reads or writes through. */
const idleIo: Io = {
  send: () => Effect.succeed("written"),
  pause: () => {},
  resume: () => {},
  abort: () => {}
}

/** The key every attempt reads. */
const credentials = {
  keyFor: () => Effect.succeed(Redacted.make("sk-loop-test-key"))
} as unknown as Credentials.Service

interface Run {
  readonly final: Final
  /** Every state set, in order (the first is the initial `Connecting`). */
  readonly states: ReadonlyArray<EventStream.ConnectionState>
  /** Each attempt's number and start time. */
  readonly attempts: ReadonlyArray<readonly [number, number]>
  /** What happened, in order: `attempt n`, and the core's decision after each (`dropped`, `ended`). */
  readonly calls: ReadonlyArray<string>
}

/**
 * The loop over a shell whose attempts the `n`th step scripts (0-based; none: a defect), run until
 * the loop ends the connection.
 */
const runLoop = (
  steps: ReadonlyArray<Step> | ((n: number) => Step),
  options: {
    readonly reconnect?: Schedule.Schedule<unknown, unknown>
    readonly firstConnect?: Schedule.Schedule<unknown, unknown>
    readonly resumes?: boolean
  } = {},
  defaults = false
): Effect.Effect<Run> =>
  Effect.gen(function*() {
    const attempts: Array<readonly [number, number]> = []
    const calls: Array<string> = []
    const clock = yield* Effect.clock
    const settings = defaults ? resolveSettings({}, {}) : resolveSettings({}, {
      reconnect: options.reconnect ?? threeRetries,
      firstConnect: options.firstConnect ?? threeRetries,
      resumes: options.resumes
    })
    const state = yield* SubscriptionRef.make<EventStream.ConnectionState>(ConnectionState.Connecting())
    const states: Array<EventStream.ConnectionState> = []
    yield* Effect.fork(Stream.runForEach(state.changes, (value) => Effect.sync(() => states.push(value))))
    yield* Effect.yieldNow()
    const shell = new Shell(
      "session-1",
      settings,
      new EventBuffer<SessionEvent.SessionEvent, EventStreamError>(),
      Wire.makeDecoder("event-data"),
      clock,
      Deadlines.make(),
      writer
    )
    const core = shell.connection
    // The core's decision after each attempt, as the loop asks for it: requeued after a drop,
    // confirmed after an end.
    const attemptEnded = core.attemptEnded.bind(core)
    core.attemptEnded = (id, now) => {
      const next = attemptEnded(id, now)
      if (next._tag === "Retry") calls.push("dropped")
      else if (next.error === undefined && next.defect === undefined) calls.push("ended")
      return next
    }
    const transport: Transport = (hooks) =>
      Effect.suspend(() => {
        const step = typeof steps === "function" ? steps(attempts.length) : steps[attempts.length]
        if (step === undefined) return Effect.dieMessage(`attempt ${attempts.length + 1} was not scripted`)
        const n = attempts.length
        attempts.push([core.attemptNumber, clock.unsafeCurrentTimeMillis()])
        calls.push(`attempt ${core.attemptNumber}`)
        hooks.attach(idleIo)
        return Effect.asVoid(Effect.forkDaemon(Effect.gen(function*() {
          if (step.opened === true) {
            if (step.openAfter !== undefined) yield* Effect.sleep(step.openAfter)
            hooks.open()
          }
          if (step.alive === true) hooks.frame(progressFrame(n))
          if (step.lasts !== undefined) yield* Effect.sleep(step.lasts)
          hooks.end(step.outcome)
        })))
      })
    const ended = yield* Deferred.make<Final>()
    const loop = new Loop(shell, { printableUrl: "wss://loop.test", agent: undefined, transport }, credentials, {
      setState: (value) => SubscriptionRef.set(state, value),
      end: (final) => Deferred.succeed(ended, final)
    })
    shell.start()
    // The loop's steps run with the context of its first (here: no logs).
    const context = yield* Logger.withMinimumLogLevel(Effect.runtime<never>(), LogLevel.None)
    yield* Effect.fork(loop.first(context))
    yield* TestClock.adjust("1 hour")
    const final = yield* Deferred.await(ended)
    yield* TestClock.adjust(0)
    return { final, states, attempts, calls }
  })

const failureOf = (final: Final): unknown =>
  Exit.isFailure(final.exit) ? Option.getOrUndefined(Cause.failureOption(final.exit.cause)) : undefined

const open = (reconnects: number, downtime?: number): EventStream.ConnectionState =>
  ConnectionState.Open({
    reconnects,
    downtime: downtime === undefined ? Option.none() : Option.some(Duration.millis(downtime))
  })

const reconnecting = (attempt: number, lastError = "closed with code 1006"): EventStream.ConnectionState =>
  ConnectionState.Reconnecting({ attempt, lastError })

describe("the connection loop", () => {
  it.effect("End: the answers are confirmed and the Final carries the reason, with a successful exit", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([{ outcome: End("complete"), opened: true }])
      assert.strictEqual(run.final.reason, "complete")
      assert.isTrue(Exit.isSuccess(run.final.exit))
      assert.deepStrictEqual(run.calls, ["attempt 1", "ended"])
    }))

  it.effect("End after reconnects: confirmed once, no drop after it", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([drop(), { outcome: End("closed-by-service"), opened: true }])
      assert.strictEqual(run.final.reason, "closed-by-service")
      assert.deepStrictEqual(run.calls, ["attempt 1", "dropped", "attempt 2", "ended"])
    }))

  it.effect("Fatal: the exit fails with the error, and the answers are neither confirmed nor requeued", () =>
    Effect.gen(function*() {
      const error = new HandshakeRejected({ code: 4401, reason: "bad key" })
      const run = yield* runLoop([{ outcome: Fatal(error, "handshake-rejected") }])
      assert.strictEqual(run.final.reason, "handshake-rejected")
      assert.strictEqual(failureOf(run.final), error)
      assert.deepStrictEqual(run.calls, ["attempt 1"])
    }))

  it.effect("never open: failures are retried on the firstConnect schedule, then NeverConnected; the state stays Connecting", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([refused(), refused(), refused(), refused("open failed: EHOSTUNREACH")])
      assert.strictEqual(run.final.reason, "connection-lost")
      const error = failureOf(run.final)
      assert.instanceOf(error, NeverConnected)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(error.lastError, "open failed: EHOSTUNREACH")
      assert.strictEqual(error.sessionId, "session-1")
      assert.deepStrictEqual(run.attempts, [[1, 0], [2, 100], [3, 200], [4, 300]])
      assert.deepStrictEqual(run.states, [ConnectionState.Connecting()])
      assert.deepStrictEqual(run.calls, [
        "attempt 1",
        "dropped",
        "attempt 2",
        "dropped",
        "attempt 3",
        "dropped",
        "attempt 4",
        "dropped"
      ])
    }))

  it.effect("never open: the default firstConnect schedule makes three tries, 250 ms then 500 ms apart", () =>
    Effect.gen(function*() {
      const run = yield* runLoop(() => refused("open failed"), {}, true)
      assert.deepStrictEqual(run.attempts.map(([, at]) => at), [0, 250, 750])
      assert.instanceOf(failureOf(run.final), NeverConnected)
    }))

  it.effect("never open: a ConnectTimeout is not tried again", () =>
    Effect.gen(function*() {
      const timeout = new ConnectTimeout({ timeout: Duration.seconds(10) })
      const run = yield* runLoop([{ outcome: Retry(timeout) }, refused()])
      const error = failureOf(run.final)
      assert.instanceOf(error, NeverConnected)
      assert.strictEqual(error.attempts, 1)
      assert.strictEqual(error.lastError, timeout.message)
      assert.deepStrictEqual(run.attempts, [[1, 0]])
    }))

  it.effect("never open: a ConnectTimeout after other failures ends the retries there", () =>
    Effect.gen(function*() {
      const timeout = new ConnectTimeout({ timeout: Duration.seconds(10) })
      const run = yield* runLoop([refused(), { outcome: Retry(timeout) }, refused()])
      const error = failureOf(run.final)
      assert.instanceOf(error, NeverConnected)
      assert.strictEqual(error.attempts, 2)
    }))

  it.effect("never open, resuming a channel watched before: ConnectTimeouts retried on the reconnect schedule, then NeverConnected", () =>
    Effect.gen(function*() {
      const timeout = new ConnectTimeout({ timeout: Duration.seconds(10) })
      const firstConnect = Schedule.recurs(0)
      const run = yield* runLoop(() => ({ outcome: Retry(timeout) }), { resumes: true, firstConnect })
      const error = failureOf(run.final)
      assert.instanceOf(error, NeverConnected)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(error.lastError, timeout.message)
      assert.deepStrictEqual(run.attempts, [[1, 0], [2, 100], [3, 200], [4, 300]])
      assert.deepStrictEqual(run.states.map((state) => state._tag), ["Connecting", "Reconnecting", "Reconnecting", "Reconnecting"])
    }))

  it.effect("never open, resuming: a channel that opens after a ConnectTimeout is then lost like any other", () =>
    Effect.gen(function*() {
      const timeout = new ConnectTimeout({ timeout: Duration.seconds(10) })
      const run = yield* runLoop([{ outcome: Retry(timeout) }, drop(), refused(), refused()], { resumes: true })
      // Once open, lost like any channel: the same bout, the time-out among its attempts.
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      assert.strictEqual(error.attempts, 4)
      assert.deepStrictEqual(run.attempts.map(([n]) => n), [1, 2, 3, 4])
      assert.isTrue(run.states.some((state) => state._tag === "Open"))
    }))

  it.effect("open, then drops: Reconnecting{n} once per retry the schedule decides, then ConnectionLost", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([drop(), refused(), refused(), refused("closed with code 1011")])
      assert.strictEqual(run.final.reason, "connection-lost")
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(error.lastError, "closed with code 1011")
      assert.deepStrictEqual(run.states, [
        ConnectionState.Connecting(),
        open(0),
        reconnecting(1),
        reconnecting(2, "open failed: ECONNREFUSED"),
        reconnecting(3, "open failed: ECONNREFUSED")
      ])
      assert.deepStrictEqual(run.attempts, [[1, 0], [2, 100], [3, 200], [4, 300]])
    }))

  it.effect("a schedule that allows no retry: ConnectionLost at once, and the state never says Reconnecting", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([drop()], { reconnect: Schedule.stop })
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      assert.strictEqual(error.attempts, 1)
      assert.deepStrictEqual(run.states, [ConnectionState.Connecting(), open(0)])
    }))

  it.effect("a connection that opens each time but delivers nothing exhausts the schedule (no progress)", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([drop(), drop(), drop(), drop()])
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      assert.strictEqual(error.attempts, 4)
      assert.deepStrictEqual(run.states, [
        ConnectionState.Connecting(),
        open(0),
        reconnecting(1),
        open(1, 100),
        reconnecting(2),
        open(2, 100),
        reconnecting(3),
        open(3, 100)
      ])
    }))

  it.effect("an attempt that delivered resets the bout and the schedule", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([live(), refused(), live(), refused(), refused(), refused()])
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      // Counted from the attempt that last delivered, that attempt included.
      assert.strictEqual(error.attempts, 4)
      assert.deepStrictEqual(run.attempts.map(([number]) => number), [1, 2, 3, 2, 3, 4])
      const retries = run.states.flatMap((state) => state._tag === "Reconnecting" ? [state.attempt] : [])
      assert.deepStrictEqual(retries, [1, 2, 1, 2, 3])
    }))

  it.effect("ConnectionLost counts every failure in a row, first-connect failures included, when nothing was delivered", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([refused(), refused(), drop(), refused(), refused(), refused()])
      const error = failureOf(run.final)
      assert.instanceOf(error, ConnectionLost)
      assert.strictEqual(error.attempts, 6)
      const retries = run.states.flatMap((state) => state._tag === "Reconnecting" ? [state.attempt] : [])
      assert.deepStrictEqual(retries, [1, 2, 3], "the reconnect schedule starts afresh once open")
    }))

  it.effect("the answers are requeued after each Retry, before the next attempt", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([drop(), refused(), live(), { outcome: End("complete"), opened: true }])
      assert.deepStrictEqual(run.calls, [
        "attempt 1",
        "dropped",
        "attempt 2",
        "dropped",
        "attempt 3",
        "dropped",
        "attempt 2",
        "ended"
      ])
    }))

  it.effect("opened: Open{reconnects, downtime}, the downtime from the drop to the reopening on the clock", () =>
    Effect.gen(function*() {
      const run = yield* runLoop([
        { ...drop(), lasts: 1000 },
        refused(),
        { ...drop(), openAfter: 50, lasts: 500 },
        { outcome: End("complete"), opened: true, openAfter: 30 }
      ])
      assert.strictEqual(run.final.reason, "complete")
      // Dropped at 1000; retried at 1100 (refused) and 1200, open at 1250. Dropped at 1750;
      // retried at 1850 (the third retry: nothing was delivered), open at 1880.
      assert.deepStrictEqual(run.attempts.map(([, at]) => at), [0, 1100, 1200, 1850])
      assert.deepStrictEqual(run.states, [
        ConnectionState.Connecting(),
        open(0),
        reconnecting(1),
        reconnecting(2, "open failed: ECONNREFUSED"),
        open(1, 250),
        reconnecting(3),
        open(2, 130)
      ])
    }))
})
