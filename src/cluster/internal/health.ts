/**
 * How the runners of `NodeClusterSessions` tell a dead runner from a live one: health by ping,
 * and every runner watching the others. Internal so that test/cluster/watchPeers.test.ts can
 * run them over in-memory parts and the `TestClock`; `NodeClusterSessions.layerRunner` is their
 * only user.
 */
import type { RunnerAddress } from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/**
 * The time-outs of a ping check: the shape of `NodeClusterSessions.Detection`, restated here so
 * that this module does not import the public one (imports run one way, no circle).
 */
export interface PingDetection {
  readonly pingTimeout: Duration.DurationInput
  readonly pingRetries: number
  readonly pingSpacing: Duration.DurationInput
}

/**
 * Health by ping, with the time-outs of `detection`: a runner is alive when one of its
 * `pingRetries + 1` pings, `pingSpacing` apart, is answered within `pingTimeout`.
 */
export const health = (detection: PingDetection): Layer.Layer<RunnerHealth.RunnerHealth, never, Runners.Runners> =>
  Layer.effect(
    RunnerHealth.RunnerHealth,
    Effect.map(Runners.Runners, (runners) =>
      RunnerHealth.RunnerHealth.of({
        isAlive: (address) =>
          runners.ping(address).pipe(
            Effect.timeout(detection.pingTimeout),
            Effect.retry({ times: detection.pingRetries, schedule: Schedule.spaced(detection.pingSpacing) }),
            Effect.isSuccess
          )
      }))
  )

/**
 * Every runner watches the others, not only the one holding `@effect/cluster`'s health-check
 * singleton: at each health check (`runnerHealthCheckInterval`) it pings each other runner marked
 * healthy and marks one that fails the detection unhealthy, so that its shards move. Without
 * it, a runner killed while it held the singleton is seen dead only when its registration expires
 * (`shardLockExpiration`). The last healthy runner is never marked (as the singleton does).
 */
export const watchPeers: Layer.Layer<
  never,
  never,
  RunnerStorage.RunnerStorage | RunnerHealth.RunnerHealth | ShardingConfig.ShardingConfig
> = Layer.scopedDiscard(Effect.gen(function*() {
  const storage = yield* RunnerStorage.RunnerStorage
  const runnerHealth = yield* RunnerHealth.RunnerHealth
  const config = yield* ShardingConfig.ShardingConfig
  const isSelf = (address: RunnerAddress) => Option.exists(config.runnerAddress, (self) => Equal.equals(self, address))
  const check = Effect.gen(function*() {
    const runners = yield* storage.getRunners
    let healthy = runners.filter(([, h]) => h).length
    yield* Effect.forEach(
      runners.filter(([runner, h]) => h && !isSelf(runner.address)),
      ([runner]) =>
        Effect.flatMap(runnerHealth.isAlive(runner.address), (alive) => {
          if (alive || healthy <= 1) return Effect.void
          healthy -= 1
          return Effect.zipRight(
            Effect.logInfo(`Runner ${runner.address.host}:${runner.address.port} did not answer: marked unhealthy`),
            storage.setRunnerHealth(runner.address, false)
          )
        }),
      { concurrency: "unbounded", discard: true }
    )
  })
  yield* check.pipe(
    Effect.ignore,
    Effect.zipRight(Effect.sleep(config.runnerHealthCheckInterval)),
    Effect.forever,
    Effect.forkScoped
  )
}))
