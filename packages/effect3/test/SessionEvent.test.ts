/**
 * The event union's cases whose text is Effect 3's: the round trip compared as values (`Either`),
 * and the guards against a tag drawn by `FastCheck`. The cases that read the same on both lines are
 * in `shared/SessionEvent.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SessionEvent from "../src/SessionEvent.js"

const tags: ReadonlyArray<SessionEvent.Tag> = [
  "Started",
  "BrowserStarted",
  "ActionRun",
  "ThoughtsAndMemories",
  "Complete",
  "AgentError",
  "ExternalResourceRequested",
  "ExternalResourceGranted",
  "Heartbeat",
  "Connected",
  "Unrecognized"
]

describe("SessionEvent", () => {
  describe("the union", () => {
    it.prop(
      "toWire then decodePayload is the identity for every known event",
      [Schema.typeSchema(SessionEvent.SessionEvent)],
      ([event]) => {
        const { event: name, payload } = SessionEvent.toWire(event)
        const decoded = SessionEvent.decodePayload(name, JSON.parse(JSON.stringify(payload)))
        if (event._tag === "Unrecognized") {
          assert.strictEqual(name, event.event)
          assert.isTrue(Option.isNone(decoded))
          return
        }
        assert.strictEqual(name, SessionEvent.wireNames[event._tag])
        if (Option.isNone(decoded)) return assert.fail(`${name} is not known`)
        assert.deepStrictEqual(decoded.value, Either.right(event))
      },
      { fastCheck: { numRuns: 500, seed: 7 } }
    )
  })

  describe("combinators and guards", () => {
    it.prop(
      "isTerminal and isChargeable agree with the tag for any event",
      [FastCheck.constantFrom(...tags), Schema.typeSchema(SessionEvent.SessionEvent)],
      ([tag, event]) => {
        assert.strictEqual(SessionEvent.isTerminal(event), event._tag === "Complete")
        assert.strictEqual(SessionEvent.isChargeable(event), event._tag === "ActionRun")
        assert.strictEqual(SessionEvent.$is(tag)(event), event._tag === tag)
      },
      { fastCheck: { numRuns: 300, seed: 11 } }
    )
  })
})
