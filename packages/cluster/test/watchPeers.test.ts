/**
 * The cluster edition's runner-to-runner health checks (`packages/cluster/binding/internal/health.ts`): every
 * runner, at each health check (`runnerHealthCheckInterval`), pings the other runners marked
 * healthy and marks one that fails the detection (`pingTimeout`, `pingRetries`, `pingSpacing`)
 * unhealthy in the `RunnerStorage`, but never the last healthy runner.
 *
 * The real `watchPeers` and the real `health` layer (its time-out, retries and spacing) run over
 * in-memory parts: `@effect/cluster`'s own `Runners.make` (over its in-memory `MessageStorage`)
 * with a `ping` each test answers or leaves unanswered, and a `RunnerStorage` that keeps the
 * health flags (the cluster's `RunnerStorage.makeMemory` ignores them and calls every runner
 * healthy). The settings are the module's defaults (`defaultShardingConfig`, `defaultDetection`);
 * every time-out and interval runs on the `TestClock`: no real sleeping.
 */
import { assert, describe, it } from "@effect/vitest"
import { EntityNotAssignedToRunner, PersistenceError, RunnerUnavailable } from "@effect/cluster/ClusterError"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Runner from "@effect/cluster/Runner"
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { health, watchPeers } from "../binding/internal/health.js"
import { defaultDetection, defaultShardingConfig } from "../src/NodeClusterSessions.js"

/** The sharding settings of a runner of `layerRunner` at `self` (the module's defaults). */
const self = RunnerAddress.make({ host: "10.0.0.11", port: 34431 })
const config: ShardingConfig.ShardingConfig["Type"] = {
  ...ShardingConfig.defaults,
  ...defaultShardingConfig,
  runnerAddress: Option.some(self)
}

/** The health check interval, and the detection's parts, in milliseconds. */
const interval = Duration.toMillis(config.runnerHealthCheckInterval)
const pingTimeout = Duration.toMillis(defaultDetection.pingTimeout)
const pingSpacing = Duration.toMillis(defaultDetection.pingSpacing)
const retries = defaultDetection.pingRetries
/** How long a check takes to give up on a runner that answers no ping: every try times out. */
const detectionTime = pingTimeout * (retries + 1) + pingSpacing * retries
const suspectFor = Duration.toMillis(defaultDetection.suspectFor)
/**
 * When a peer that answers no ping from the check starting at `first` on is marked: that check
 * fails (it is suspected), the next starts an interval later and fails too, `suspectFor` or more
 * after the first failure (asserted below: `suspectFor <= detectionTime + interval`).
 */
const silentMark = (first: number) => first + detectionTime + interval + detectionTime

const peerA = RunnerAddress.make({ host: "10.0.0.12", port: 34431 })
const peerB = RunnerAddress.make({ host: "10.0.0.13", port: 34432 })

const key = (address: RunnerAddress): string => `${address.host}:${address.port}`

/**
 * How a runner answers a ping: at once; never (frozen, its machine gone: the ping waits for the
 * time-out); refused at once (killed: its port refuses); or only on the last try of each check
 * (the `pingRetries + 1`-th ping, all earlier ones never answered).
 */
type Answer = "answers" | "silent" | "refuses" | "lastTry"

/** A marking of a runner's health in the storage, and when it happened. */
interface Mark {
  readonly runner: string
  readonly healthy: boolean
  readonly at: number
}

/** A ping, and when it was sent. */
interface Ping {
  readonly runner: string
  readonly at: number
}

/** A log line, as the logger saw it. */
interface LogLine {
  readonly level: string
  readonly message: string
  readonly annotations: string
  readonly withCause: boolean
}

/**
 * The world of one test: the runners' answers and health (and whether the storage answers),
 * and what happened to them.
 */
interface World {
  storageDown: boolean
  readonly runners: ReadonlyArray<RunnerAddress>
  readonly answers: Map<string, Answer>
  readonly healthy: Map<string, boolean>
  readonly marks: Array<Mark>
  readonly pings: Array<Ping>
  readonly logs: Array<LogLine>
}

const makeWorld = (runners: ReadonlyArray<readonly [RunnerAddress, boolean, Answer]>): World => ({
  storageDown: false,
  runners: runners.map(([address]) => address),
  answers: new Map(runners.map(([address, , answer]) => [key(address), answer])),
  healthy: new Map(runners.map(([address, healthy]) => [key(address), healthy])),
  marks: [],
  pings: [],
  logs: []
})

/** A runner of the cluster at `address` (its registration: one shard group, weight 1). */
const runnerAt = (address: RunnerAddress): Runner.Runner => Runner.make({ address, groups: ["default"], weight: 1 })

/**
 * A `RunnerStorage` over the world's health flags: `getRunners` lists every runner with its flag
 * (or fails while the storage is down), `setRunnerHealth` changes the flag and records the
 * marking; the rest is the cluster's in-memory storage (not used by the health checks).
 */
const storageLayer = (world: World): Layer.Layer<RunnerStorage.RunnerStorage> =>
  Layer.effect(
    RunnerStorage.RunnerStorage,
    Effect.map(RunnerStorage.makeMemory, (memory) =>
      RunnerStorage.RunnerStorage.of({
        ...memory,
        getRunners: Effect.suspend(() =>
          world.storageDown
            ? Effect.fail(new PersistenceError({ cause: "the database is unreachable" }))
            : Effect.succeed(world.runners.map((address) => [runnerAt(address), world.healthy.get(key(address)) ?? false] as const))
        ),
        setRunnerHealth: (address, healthy) =>
          Effect.map(Clock.currentTimeMillis, (at) => {
            world.healthy.set(key(address), healthy)
            world.marks.push({ runner: key(address), healthy, at })
          })
      }))
  )

/** `@effect/cluster`'s `Runners` whose `ping` answers as the world says, recording each ping. */
const runnersLayer = (world: World): Layer.Layer<Runners.Runners, never, ShardingConfig.ShardingConfig> => {
  const tries = new Map<string, number>()
  const ping = (address: RunnerAddress): Effect.Effect<void, RunnerUnavailable> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => {
      const runner = key(address)
      const attempt = tries.get(runner) ?? 0
      tries.set(runner, attempt + 1)
      world.pings.push({ runner, at })
      switch (world.answers.get(runner) ?? "answers") {
        case "answers":
          return Effect.void
        case "silent":
          return Effect.never
        case "refuses":
          return Effect.fail(new RunnerUnavailable({ address }))
        case "lastTry":
          return attempt % (retries + 1) === retries ? Effect.void : Effect.never
      }
    })
  return Layer.scoped(
    Runners.Runners,
    Runners.make({
      send: ({ message }) => Effect.fail(new EntityNotAssignedToRunner({ address: message.envelope.address })),
      notify: () => Effect.void,
      ping,
      onRunnerUnavailable: () => Effect.void
    })
  ).pipe(Layer.provide([MessageStorage.layerMemory, Snowflake.layerGenerator]))
}

/** Every log line, at every level, into the world. */
const captureLogs = (world: World) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, cause, logLevel, message }) => {
      world.logs.push({
        level: logLevel.label,
        message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
        annotations: JSON.stringify(Object.fromEntries(annotations)),
        withCause: !Cause.isEmpty(cause)
      })
    })
  )

/**
 * A database URL with a password, in the environment `layerRunner` reads it from: the one
 * secret of a runner. The health checks do not read it; the environment holds it so that a log
 * line that came to carry it (an annotation, a cause) would be seen.
 */
const password = "s3cret-Pa55word"
const databaseUrl = `postgres://cluster:${password}@db.internal:5432/sessions`

/**
 * Starts the health checks of the runner at `self` (the real `watchPeers` over the real `health`
 * with the default detection) over the world, in the current scope; the first check runs at once.
 */
const startWatching = (world: World) =>
  Layer.build(
    watchPeers.pipe(
      Layer.provide(health(defaultDetection)),
      Layer.provide(runnersLayer(world)),
      Layer.provide([storageLayer(world), ShardingConfig.layer(config)])
    )
  )

/** Runs `body` with the world's logs captured (every level) and the database URL in the environment. */
const inWorld = <A, E>(world: World, body: Effect.Effect<A, E, Scope.Scope>) =>
  body.pipe(
    Effect.scoped,
    Effect.provide(captureLogs(world)),
    Logger.withMinimumLogLevel(LogLevel.All),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["CLUSTER_DATABASE_URL", databaseUrl]])))
  )

/** A world of these runners, watched from `self` from time 0 on, and the test's body in it. */
const watching = <A, E>(
  runners: ReadonlyArray<readonly [RunnerAddress, boolean, Answer]>,
  body: (world: World) => Effect.Effect<A, E, Scope.Scope>
) => {
  const world = makeWorld(runners)
  return inWorld(world, Effect.zipRight(startWatching(world), body(world)))
}

/** Moves the `TestClock` to `at` ms, running every sleep and time-out due by then. */
const clockAt = (at: number) => TestClock.setTime(at)

const pingTimes = (world: World, runner: RunnerAddress) =>
  world.pings.filter((ping) => ping.runner === key(runner)).map((ping) => ping.at)

const marked = "did not answer: marked unhealthy"

/** No runner was marked: the given peers are still healthy, and no marking was logged. */
const neverMarked = (world: World, ...peers: ReadonlyArray<RunnerAddress>) => {
  assert.deepStrictEqual(world.marks, [])
  for (const peer of peers) assert.isTrue(world.healthy.get(key(peer)))
  assert.deepStrictEqual(world.logs.filter((line) => line.message.includes(marked)), [])
}

describe("watchPeers: every runner pings the others at each health check", () => {
  it.effect("a peer that stops answering is suspected at the first check it fails and marked at the next, not before", () => {
    const world = makeWorld([[self, true, "answers"], [peerA, true, "answers"], [peerB, true, "answers"]])
    return inWorld(
      world,
      Effect.gen(function*() {
        // The module's documented figures: a check gives up after about 1.7 s; the suspicion lasts
        // 1 s, so the next failed check (2.2 s after the first fails) declares the peer dead.
        assert.strictEqual(detectionTime, 1_700)
        assert.strictEqual(suspectFor, 1_000)
        assert.isAtMost(suspectFor, detectionTime + interval)
        yield* startWatching(world)
        yield* clockAt(0)
        // The first check, at once: both peers pinged (not this runner itself), both answered.
        assert.deepStrictEqual(pingTimes(world, peerA), [0])
        assert.deepStrictEqual(pingTimes(world, peerB), [0])
        assert.deepStrictEqual(pingTimes(world, self), [])
        // peerA freezes right after the check it answered.
        world.answers.set(key(peerA), "silent")
        const bound = silentMark(interval)
        // The first failed check only suspects it.
        yield* clockAt(interval + detectionTime)
        assert.isTrue(world.healthy.get(key(peerA)), "suspected, not marked, at the first failed check")
        yield* clockAt(bound - 1)
        assert.isTrue(world.healthy.get(key(peerA)), "still healthy 1 ms before the bound")
        assert.deepStrictEqual(world.marks, [])
        yield* clockAt(bound)
        assert.deepStrictEqual(world.marks, [{ runner: key(peerA), healthy: false, at: bound }])
        assert.isFalse(world.healthy.get(key(peerA)))
        // The peers are checked together: peerB was pinged at the check's start, not after peerA's tries.
        assert.deepStrictEqual(pingTimes(world, peerB).slice(0, 2), [0, interval])
        // The tries of the two checks: one every time-out plus spacing, `pingRetries + 1` in each.
        const tries = (start: number) => Array.from({ length: retries + 1 }, (_, i) => start + i * (pingTimeout + pingSpacing))
        assert.deepStrictEqual(
          pingTimes(world, peerA),
          [0, ...tries(interval), ...tries(interval + detectionTime + interval)]
        )
        // Marked, it is no longer pinged; peerB, still answering, is, and stays healthy.
        const pinged = world.pings.length
        yield* clockAt(bound + 10 * interval)
        assert.deepStrictEqual(world.pings.slice(pinged).filter((ping) => ping.runner === key(peerA)), [])
        assert.isAbove(pingTimes(world, peerB).length, 10)
        assert.isTrue(world.healthy.get(key(peerB)))
        assert.strictEqual(world.marks.length, 1)
      })
    )
  })

  it.effect("a peer whose port refuses (killed) is marked after the spacing of its retries, not the time-outs", () =>
    watching([[self, true, "answers"], [peerA, true, "answers"]], (world) =>
      Effect.gen(function*() {
        yield* clockAt(0)
        assert.deepStrictEqual(pingTimes(world, peerA), [0])
        world.answers.set(key(peerA), "refuses")
        const bound = interval + pingSpacing * retries
        yield* clockAt(bound - 1)
        assert.deepStrictEqual(world.marks, [])
        yield* clockAt(bound)
        assert.deepStrictEqual(world.marks, [{ runner: key(peerA), healthy: false, at: bound }])
      })))

  it.effect("a peer that misses one check (a pause under load) and answers the next is never marked; the suspicion starts again", () =>
    watching([[self, true, "answers"], [peerA, true, "answers"]], (world) =>
      Effect.gen(function*() {
        yield* clockAt(0)
        // Silent for the check at one interval only: it fails, the peer is suspected.
        world.answers.set(key(peerA), "silent")
        yield* clockAt(interval + detectionTime)
        world.answers.set(key(peerA), "answers")
        // It answers the next check: no longer suspected, never marked.
        yield* clockAt(interval + detectionTime + interval)
        assert.deepStrictEqual(world.marks, [])
        // Silent again much later: the suspicion starts afresh (one failed check does not mark it).
        const later = interval + detectionTime + 10 * interval
        yield* clockAt(later)
        world.answers.set(key(peerA), "silent")
        const nextCheck = pingTimes(world, peerA).filter((at) => at > later)[0] ?? later + interval
        yield* clockAt(nextCheck)
        const again = pingTimes(world, peerA).filter((at) => at >= nextCheck)[0]!
        yield* clockAt(again + detectionTime)
        assert.deepStrictEqual(world.marks, [], "one failed check after a passed one only suspects")
        yield* clockAt(silentMark(again))
        assert.deepStrictEqual(world.marks, [{ runner: key(peerA), healthy: false, at: silentMark(again) }])
      })))

  it.effect("a peer that answers is never marked, over many intervals", () =>
    watching([[self, true, "answers"], [peerA, true, "answers"], [peerB, true, "answers"]], (world) =>
      Effect.gen(function*() {
        const checks = 50
        yield* clockAt(checks * interval)
        // One ping per peer and check (the checks are really made), none failed.
        assert.deepStrictEqual(pingTimes(world, peerA), Array.from({ length: checks + 1 }, (_, i) => i * interval))
        assert.deepStrictEqual(pingTimes(world, peerB), Array.from({ length: checks + 1 }, (_, i) => i * interval))
        neverMarked(world, peerA, peerB)
      })))

  it.effect("a peer that answers only the last try of each check is never marked (the retries are made)", () =>
    watching([[self, true, "answers"], [peerA, true, "lastTry"]], (world) =>
      Effect.gen(function*() {
        // Each check: `pingRetries` unanswered tries, then the answered one; then the interval.
        const period = detectionTime - pingTimeout + interval
        const checks = 10
        yield* clockAt((checks + 1) * period - 1)
        const tries = Array.from({ length: retries + 1 }, (_, i) => i * (pingTimeout + pingSpacing))
        assert.deepStrictEqual(
          pingTimes(world, peerA),
          Array.from({ length: checks + 1 }, (_, check) => tries.map((at) => check * period + at)).flat()
        )
        neverMarked(world, peerA)
      })))

  it.effect("the last healthy runner is never marked: this runner already unhealthy, the one peer silent", () =>
    watching([[self, false, "answers"], [peerA, true, "silent"]], (world) =>
      Effect.gen(function*() {
        yield* clockAt(10 * (interval + detectionTime))
        // It fails every check and stays healthy (the cluster keeps a runner), and is still pinged.
        assert.deepStrictEqual(world.marks, [])
        assert.isTrue(world.healthy.get(key(peerA)))
        assert.isAtLeast(pingTimes(world, peerA).length, 10 * (retries + 1))
        assert.deepStrictEqual(world.logs.filter((line) => line.message.includes(marked)), [])
      })))

  it.effect("the last healthy runner is never marked: of two silent peers (this runner unhealthy), one is marked", () =>
    watching([[self, false, "answers"], [peerA, true, "silent"], [peerB, true, "silent"]], (world) =>
      Effect.gen(function*() {
        yield* clockAt(10 * (interval + detectionTime))
        assert.strictEqual(world.marks.length, 1)
        assert.strictEqual(world.marks[0]?.at, silentMark(0))
        assert.strictEqual([...world.healthy.values()].filter((healthy) => healthy).length, 1)
      })))

  it.effect("a check that fails (the storage unreachable) is made again at the next interval", () => {
    const world = makeWorld([[self, true, "answers"], [peerA, true, "silent"]])
    world.storageDown = true
    return inWorld(
      world,
      Effect.gen(function*() {
        yield* startWatching(world)
        // The checks at 0, 1, 2 and 3 intervals fail: no runner read, none pinged.
        yield* clockAt(3 * interval + interval / 2)
        assert.deepStrictEqual(world.pings, [])
        world.storageDown = false
        // The check at 4 intervals reads the runners again and suspects the silent peer; the next marks it.
        yield* clockAt(silentMark(4 * interval))
        assert.deepStrictEqual(world.marks, [{ runner: key(peerA), healthy: false, at: silentMark(4 * interval) }])
      })
    )
  })

  it.effect("the marking is logged once at INFO, host and port only: no secret, no annotation, no cause", () =>
    watching([[self, true, "answers"], [peerB, true, "answers"]], (world) =>
      Effect.gen(function*() {
        yield* clockAt(0)
        assert.deepStrictEqual(pingTimes(world, peerB), [0])
        world.answers.set(key(peerB), "silent")
        yield* clockAt(silentMark(interval) - 1)
        assert.deepStrictEqual(world.logs, [])
        yield* clockAt(silentMark(interval) + 10 * interval)
        // The database URL was in the environment all along; no line carries it or its password.
        for (const line of world.logs) {
          const text = JSON.stringify(line)
          assert.notInclude(text, password)
          assert.notInclude(text, "postgres://")
        }
        assert.deepStrictEqual(world.logs, [{
          level: "INFO",
          message: "Runner 10.0.0.13:34432 did not answer: marked unhealthy",
          annotations: "{}",
          withCause: false
        }])
      })))
})
