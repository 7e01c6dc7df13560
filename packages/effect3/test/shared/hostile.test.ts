/**
 * The hostile-server cases of the conformance suite (`hostileCases`, effect-agent-session-conformance)
 * run with each edition's whole SDK over Node (`NodeAgentSessions.layer`), written once for both
 * editions: pointed at a scriptable hostile server on loopback (HTTP, WebSocket, Server-Sent
 * Events), each run observed by `./hostile.ts` (`runOnce`) and judged by `hostileVerdict`. Each
 * edition's own hostile runner (`hostile/sdk.test.ts` on Effect 3, `e2e/hostile.test.ts` on
 * Effect 4) holds the cases over `FetchAgentSessions` and what only that edition shows. vitest runs
 * with --expose-gc (the live heap after a collection).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { hostileCases } from "effect-agent-session-conformance"
import { problemsOf } from "./hostile.js"

describe("hostile server (conformance hostile cases, NodeAgentSessions)", () => {
  for (const hostile of hostileCases) {
    it.live(hostile.name, () =>
      Effect.gen(function*() {
        const problems = yield* problemsOf(hostile, "node")
        assert.deepStrictEqual(problems, [], problems.join("\n"))
      }))
  }
})
