/**
 * `effect-agent-session simulate` as a child process on port 0, and `run` against it.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { parseFaults } from "../src/Simulate.js"
import { cleanEnv, run, spawn } from "./helpers.js"

describe("effect-agent-session simulate", () => {
  it.live("prints its addresses and key; run completes against it through a dropped socket; SIGINT stops it", () =>
    Effect.scoped(Effect.gen(function*() {
      const simulator = yield* spawn(
        ["simulate", "--port", "0", "--json", "--frame-delay", "2", "--actions", "3", "--fault", "drop-after=3"],
        cleanEnv()
      )
      const line = yield* simulator.waitFor(/^\{.*\}\n/)
      const info = JSON.parse(line[0]) as { baseUrl: string; wsUrl: string; port: number; accountKey: string }
      expect(info.baseUrl).toBe(`http://127.0.0.1:${info.port}`)
      expect(info.wsUrl).toBe(`ws://127.0.0.1:${info.port}`)
      assert.isTrue(info.port > 0)
      expect(info.accountKey).toBe("sim-account-key")

      const result = yield* run(
        ["run", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "3", "--json", "--approve"],
        cleanEnv({
          AGENT_SESSION_BASE_URL: info.baseUrl,
          AGENT_SESSION_WS_URL: info.wsUrl,
          AGENT_SESSION_API_KEY: info.accountKey
        })
      )
      expect(result.code).toBe(0)
      const objects = result.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
      // The drop after the third frame is shown as it happens, then the reconnection.
      const states = objects.filter((o) => o["kind"] === "state").map((o) => o["state"])
      expect(states).toEqual(["Open", "Reconnecting", "Open", "Closed"])
      expect(objects.filter((o) => o["event"] === "action_run").length).toBe(3)
      expect(objects[objects.length - 1]?.["kind"]).toBe("outcome")

      simulator.process.kill("SIGINT")
      const stopped = yield* simulator.finished
      expect(stopped.code).toBe(130)
      const refused = yield* Effect.either(Effect.tryPromise(() => fetch(`${info.baseUrl}/agent/onboard`)))
      assert.isTrue(Either.isLeft(refused))
    })))

  it("parseFaults reads every --fault form and refuses unknown ones", () => {
    const faults = parseFaults([
      "drop-after=2,5",
      "drop-after=9",
      "malformed-at=3",
      "unknown-event-at=4",
      "stall-after=2:500",
      "exceed-max-actions=2",
      "close-before-complete",
      "reject-handshake",
      "fail-503=2",
      "rate-limit=1:3",
      "http-delay=10",
      "oversize-at=3:100000",
      "replay-on-reconnect=3"
    ])
    assert.isTrue(Either.isRight(faults))
    const value = Either.getOrThrow(faults)
    expect(value.ws?.dropAfter).toEqual([2, 5, 9])
    expect(value.ws?.malformedAt).toBe(3)
    expect(value.ws?.unknownEventAt).toBe(4)
    expect(value.ws?.exceedMaxActions).toBe(2)
    expect(value.ws?.closeBeforeComplete).toBe(true)
    expect(value.ws?.oversize).toEqual({ at: 3, bytes: 100_000 })
    expect(value.ws?.replayOnReconnect).toBe(3)
    expect(value.ws?.rejectHandshake).toBe(true)
    expect(value.http?.fail503).toBe(2)
    expect(value.http?.rateLimit).toEqual({ count: 1, retryAfter: "3" })
    expect(Either.getLeft(parseFaults(["explode=1"]))._tag).toBe("Some")
    expect(Either.getLeft(parseFaults(["drop-after=x"]))._tag).toBe("Some")
  })
})
