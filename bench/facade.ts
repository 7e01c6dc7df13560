/**
 * The façade's own cost per event (issue 15 target 3, "the path users take"): `N` ready events
 * through `AgentSessions.attach(...).events` and `AgentSessions.run` (default options) against
 * the same events consumed bare, in one process, alternating rounds, CPU time (user + system)
 * per event. The connection is a stub whose `events` pull one chunk of `k` events per Effect
 * (as a mailbox's `takeAll` does), so the figures are the façade's alone, not the engine's.
 *
 *   npx tsx bench/facade.ts                      # N=20000 ROUNDS=9 K=1,16,256
 *   N=100000 ROUNDS=5 K=256 npx tsx bench/facade.ts
 *
 * Printed per chunk size: the bare consumer's ns per event, and the medians of the paired
 * differences (façade minus bare, same round) for `attach` (consumer: `Stream.runForEach`, on
 * both sides) and `run` (against `Stream.runDrain` of the bare events). `run`'s figure includes
 * its fixed cost per session (create through the test kit's `AgentApi`, scope, spans), spread
 * over `N` events.
 *
 * Measured 2026-11-22 (2 cores shared with other jobs, load average 7 to 11; N=20000, 9 rounds;
 * the façade before issue 15 beside it, same process): added CPU per event, façade minus bare,
 *
 * | chunk | attach before | attach after | run before | run after |
 * | --- | --- | --- | --- | --- |
 * | 1   | +21,025 ns | +801 ns | +24,661 ns | +944 ns |
 * | 16  | +1,410 ns  | +158 ns | +1,948 ns  | +129 ns |
 * | 256 | +183 ns    | +43 ns  | +550 ns    | +122 ns |
 *
 * against bare consumers at 8,265 / 767 / 307 ns per event (`runForEach`) and 5,091 / 361 /
 * 41 ns (`runDrain`). Before, most of it was `Stream.withSpan`: an `Effect.provide` around every
 * effect the events ran (two per chunk).
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { AgentApi } from "effect-agent-session/AgentApi"
import * as AgentSessions from "effect-agent-session/AgentSessions"
import * as EventStream from "effect-agent-session/EventStream"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import { AgentSessionsTest } from "effect-agent-session/testing"

const N = Number(process.env.N ?? 20_000)
const ROUNDS = Number(process.env.ROUNDS ?? 9)
const SIZES = (process.env.K ?? "1,16,256").split(",").map(Number)

const sessionId = SessionEvent.Started.fields.sessionId.make("bench-session")
const actionSessionId = SessionEvent.ActionRun.fields.action_session_id.make("as-1")
const events: Array<SessionEvent.SessionEvent> = []
for (let i = 0; i < N - 1; i++) {
  events.push(
    i % 4 === 0
      ? { _tag: "ActionRun", name: `a${i}`, action_session_id: actionSessionId, content: "c" }
      : { _tag: "ThoughtsAndMemories", thought: `t${i}`, memory: "m" }
  )
}
events.push({
  _tag: "Complete",
  response: "done",
  type: "STRING",
  total_cost: Option.some(1),
  cost_summary: Option.none(),
  session_id: sessionId
})

let chunkSize = 1
/** One Effect per pulled chunk of `chunkSize` events. */
const upstream = (): Stream.Stream<SessionEvent.SessionEvent> =>
  Stream.suspend(() => {
    let i = 0
    const k = chunkSize
    return Stream.repeatEffectChunkOption(Effect.suspend(() => {
      if (i >= events.length) return Effect.fail(Option.none())
      const chunk = Chunk.unsafeFromArray(events.slice(i, i + k))
      i += k
      return Effect.succeed(chunk)
    }))
  })

const stub = EventStream.EventStream.of({
  connect: (id) =>
    Effect.map(
      SubscriptionRef.make<EventStream.ConnectionState>(EventStream.ConnectionState.Connecting()),
      (state) => ({
        sessionId: id,
        events: upstream(),
        state,
        opened: Effect.void,
        respond: () => Effect.void,
        close: Effect.void,
        drain: Effect.void
      })
    ),
  events: () => upstream()
})

let sink = 0
const consume = <E>(stream: Stream.Stream<SessionEvent.SessionEvent, E>) =>
  Stream.runForEach(stream, (event) =>
    Effect.sync(() => {
      sink += event._tag.length
    }))

/** CPU time per event (ns) of one run. */
const cpuPerEvent = <E>(effect: Effect.Effect<unknown, E>) =>
  Effect.gen(function*() {
    const start = process.cpuUsage()
    yield* effect
    const used = process.cpuUsage(start)
    return (used.user + used.system) * 1000 / N
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN

const program = Effect.gen(function*() {
  const api = yield* AgentApi
  const session = yield* api.createSession({ start_url: "https://example.com", max_actions: 5, goal: "bench" })
  const sessions = yield* AgentSessions.make
  const request = { start_url: "https://example.com", max_actions: N, goal: "bench" }
  const variants = {
    bare: Effect.suspend(() => cpuPerEvent(consume(upstream()))),
    attach: Effect.scoped(Effect.flatMap(sessions.attach(session, N), (running) => cpuPerEvent(consume(running.events)))),
    bareDrain: Effect.suspend(() => cpuPerEvent(Stream.runDrain(upstream()))),
    run: cpuPerEvent(sessions.run(request))
  }
  type Variant = keyof typeof variants
  const order: ReadonlyArray<Variant> = ["bare", "attach", "bareDrain", "run"]
  for (const size of SIZES) {
    chunkSize = size
    const results: Record<Variant, Array<number>> = { bare: [], attach: [], bareDrain: [], run: [] }
    // Round 0 warms up; odd rounds run in reverse order.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const name of round % 2 === 0 ? order : [...order].reverse()) {
        const ns = yield* variants[name]
        if (round > 0) results[name].push(ns)
      }
    }
    const paired = (xs: ReadonlyArray<number>, base: ReadonlyArray<number>) =>
      median(xs.map((x, i) => x - (base[i] ?? Number.NaN)))
    console.log(
      `chunk ${size}: bare ${median(results.bare).toFixed(0)} ns/event, attach +${
        paired(results.attach, results.bare).toFixed(0)
      }; runDrain ${median(results.bareDrain).toFixed(0)} ns/event, run +${paired(results.run, results.bareDrain).toFixed(0)}`
    )
  }
}).pipe(Effect.provideService(EventStream.EventStream, stub), Effect.provide(AgentSessionsTest.layer()))

Effect.runPromise(Effect.orDie(program)).then(() => {
  if (sink < 0) console.log(sink)
})
