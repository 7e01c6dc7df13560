/**
 * How the runners of `NodeClusterSessions` tell a dead runner from a live one: health by ping,
 * and every runner watching the others. Written once for both cluster editions; internal so that
 * packages/cluster/test/watchPeers.test.ts can run them over in-memory parts and the `TestClock`;
 * the binding's `internal/socketSharding.ts` is their only user.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import {
  type DurationInput,
  durationOf,
  isTimeout,
  RunnerHealth,
  Runners,
  RunnerStorage,
  scopedDiscardLayer,
  ShardingConfig
} from "../../src/internal/line.js"

/**
 * The time-outs of a ping check: the shape of `NodeClusterSessions.Detection`, restated here so
 * that this module does not import the public one (imports run one way, no circle).
 */
export interface PingDetection {
  readonly pingTimeout: DurationInput
  readonly pingRetries: number
  readonly pingSpacing: DurationInput
  readonly suspectFor: DurationInput
}

/**
 * Health by ping, with the time-outs of `detection`: a runner passes a check when one of its
 * `pingRetries + 1` pings, `pingSpacing` apart, is answered within `pingTimeout`. One that fails
 * it because its port refuses (killed, gone) is dead at once. One whose last ping timed out (frozen,
 * or only lagging under load) is suspected from that check on, and dead only at a failed check
 * `suspectFor` or more after the first; a passed check clears the suspicion. The suspicion is kept
 * per runner and in time, not in checks: both this runner's watch and the cluster's health-check
 * singleton ask, each at its own pace.
 */
export const health = (detection: PingDetection): Layer.Layer<RunnerHealth.RunnerHealth, never, Runners.Runners> =>
  Layer.effect(
    RunnerHealth.RunnerHealth,
    Effect.map(Runners.Runners, (runners) => {
      const suspectFor = Duration.toMillis(durationOf(detection.suspectFor))
      /** Each suspected runner (`host:port`) and when it was first found silent. */
      const suspects = new Map<string, number>()
      return RunnerHealth.RunnerHealth.of({
        isAlive: (address) =>
          runners.ping(address).pipe(
            Effect.timeout(detection.pingTimeout),
            Effect.retry({ times: detection.pingRetries, schedule: Schedule.spaced(detection.pingSpacing) }),
            Effect.matchEffect({
              onSuccess: () => {
                suspects.delete(`${address.host}:${address.port}`)
                return Effect.succeed(true)
              },
              onFailure: (error) => {
                if (!isTimeout(error)) return Effect.succeed(false)
                const runner = `${address.host}:${address.port}`
                return Effect.map(Clock.currentTimeMillis, (now) => {
                  const since = suspects.get(runner)
                  if (since === undefined) suspects.set(runner, now)
                  return since === undefined || now - since < suspectFor
                })
              }
            })
          )
      })
    })
  )

/**
 * Every runner watches the others, not only the one holding the cluster's health-check
 * singleton: at each health check (`runnerHealthCheckInterval`) it pings each other runner marked
 * healthy and marks one that fails the detection unhealthy, so that its shards move. Without
 * it, a runner killed while it held the singleton is seen dead only when its registration expires
 * (`shardLockExpiration`). The last healthy runner is never marked (as the singleton does).
 */
export const watchPeers: Layer.Layer<
  never,
  never,
  RunnerStorage.RunnerStorage | RunnerHealth.RunnerHealth | ShardingConfig.ShardingConfig
> = scopedDiscardLayer(Effect.gen(function*() {
  const storage = yield* RunnerStorage.RunnerStorage
  const runnerHealth = yield* RunnerHealth.RunnerHealth
  const config = yield* ShardingConfig.ShardingConfig
  const check = Effect.gen(function*() {
    const runners = yield* storage.getRunners
    let healthy = runners.filter(([, h]) => h).length
    yield* Effect.forEach(
      runners.filter(([runner, h]) => h && !Option.exists(config.runnerAddress, (self) => Equal.equals(self, runner.address))),
      ([runner]) =>
        Effect.flatMap(runnerHealth.isAlive(runner.address), (alive) => {
          if (alive || healthy <= 1) return Effect.void
          healthy -= 1
          return Effect.andThen(
            Effect.logInfo(`Runner ${runner.address.host}:${runner.address.port} did not answer: marked unhealthy`),
            storage.setRunnerHealth(runner.address, false)
          )
        }),
      { concurrency: "unbounded", discard: true }
    )
  })
  yield* check.pipe(
    Effect.ignore,
    Effect.andThen(Effect.sleep(config.runnerHealthCheckInterval)),
    Effect.forever,
    Effect.forkScoped
  )
}))
