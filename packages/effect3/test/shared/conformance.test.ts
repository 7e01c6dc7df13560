/**
 * The conformance suite's replay scenarios (`replayScenarios`, packages/conformance), written once
 * for both editions: each runs over the edition's in-memory replay (`AgentSessionsTest.replay`) on
 * the `TestClock` (`observeReplay`, `./conformance.ts`), judged by the suite's `replayVerdict`. Each
 * edition's `conformance.test.ts` runs the live scenarios against its simulator.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { recordingPath, replayScenarios, replayVerdict, testAccountKey } from "effect-agent-session-conformance"
import { observeReplay } from "./conformance.js"

describe("conformance replays", () => {
  for (const s of replayScenarios) {
    it.effect(s.name, () =>
      Effect.gen(function*() {
        const observed = yield* observeReplay(recordingPath(s.recording), s.options, s.program)
        assert.deepStrictEqual(replayVerdict(s.expect, observed, [testAccountKey]), [])
      }))
  }
})
