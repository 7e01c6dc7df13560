/**
 * A generative hostile service (issue 20): fast-check builds a script of connections, each a run
 * of frames (repeated, replayed from the previous connection, malformed, oversize, keep-alives,
 * requests), stalls and splits, ended by a close with any code, `complete`, or silence. The
 * interpreters (`generative.test.ts`) play it to the SDK over the fake socket (TestClock), over a
 * stubbed SSE body, and over real sockets; `check` holds the promises users rely on:
 *
 * - every `action_run` received is delivered, and counted, once (a service not known to replay:
 *   exactly the frames received; known to replay: never fewer than the newest connection sent,
 *   and a dropped frame is always a copy of one delivered before), and the budget guard stops at
 *   the first one over `max_actions`, delivering nothing after it;
 * - nothing is delivered twice by the SDK, nothing is invented, the order is kept;
 * - no answer is lost: every answer `respond` accepted was written to a connection, or is
 *   listed in `Closed { unsent }`;
 * - every wait is bounded: the stream ends, with a typed error or normally.
 */
import { assert } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import type { AgentSessionError } from "../../src/Errors.js"
import type * as EventStream from "../../src/EventStream.js"
import type * as SessionEvent from "../../src/SessionEvent.js"
import * as Wire from "../../src/Wire.js"
import { requestData } from "../shared/events.js"

export const SESSION = "generative-session"
/** The SDK's `maxFrameSize` in these runs: small, so oversize fields are cheap to make. */
export const MAX_FRAME = 4096

const frame = (event: string, data: unknown): string => JSON.stringify({ event, data })

/** One frame the service sends (by what it is, so it can be built for any transport). */
export type Frame =
  | { readonly _tag: "Action"; readonly content: string }
  | { readonly _tag: "Request"; readonly id: string }
  | { readonly _tag: "Thought"; readonly size: number }
  | { readonly _tag: "Heartbeat" }
  | { readonly _tag: "Error" }
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Malformed" }

/** A step of a connection. */
export type Step =
  | { readonly _tag: "Send"; readonly frame: Frame }
  /** The previous frame again. */
  | { readonly _tag: "Duplicate" }
  /** Silence for this many seconds (virtual, or tenths of a second on real sockets). */
  | { readonly _tag: "Stall"; readonly seconds: number }

/** How a connection ends. */
export type End =
  | { readonly _tag: "Close"; readonly code: number }
  | { readonly _tag: "Complete" }
  /** Nothing more: the idle time-out ends it. */
  | { readonly _tag: "Silent" }

export interface Connection {
  /** The last N frames of the previous connection, sent again first (a replaying service). */
  readonly replay: number
  readonly steps: ReadonlyArray<Step>
  readonly end: End
  /**
   * Fake socket: frames handed over this many at a time (one socket read, one chunk for the
   * consumer); real sockets: each message sent in this many WebSocket fragments.
   */
  readonly split: number
}

export interface Script {
  readonly connections: ReadonlyArray<Connection>
  /** The SDK's option `replaysOnReconnect`. */
  readonly replays: boolean
  /** The SDK's option `failOnFrameError`. */
  readonly failOnFrameError: boolean
  /** The session's `max_actions` (the façade's budget guard, `onBudgetExceeded: "fail"`). */
  readonly maxActions: number
}

/** The wire text of a frame (`event-data` framing); a unique counter makes identical actions rare when asked. */
export const render = (f: Frame): string => {
  switch (f._tag) {
    case "Action":
      return frame("action_run", { name: "scroll", action_session_id: "as-1", content: f.content })
    case "Request":
      return frame("external_resource_requested", requestData(f.id))
    case "Thought":
      return frame("thoughts_and_memories", { thought: "t".repeat(f.size), memory: "m" })
    case "Heartbeat":
      return frame("heartbeat", {})
    case "Error":
      return frame("error", { error: "the page did not load" })
    case "Unknown":
      return frame("mystery_event", { level: 3 })
    case "Malformed":
      return "{not json"
  }
}

const frameArb: FastCheck.Arbitrary<Frame> = FastCheck.oneof(
  // Few contents: the same action repeats (scroll down twice), around reconnects too.
  { weight: 6, arbitrary: FastCheck.constantFrom("down", "up", "left").map((content): Frame => ({ _tag: "Action", content })) },
  // Few ids: requests repeat; one long id (a key over MAX_KEY_LENGTH).
  {
    weight: 3,
    arbitrary: FastCheck.constantFrom("as-1", "as-2", "as-3", "x".repeat(600)).map((id): Frame => ({ _tag: "Request", id }))
  },
  // Thoughts up to over the frame limit: oversize fields.
  { weight: 2, arbitrary: FastCheck.integer({ min: 0, max: MAX_FRAME + 200 }).map((size): Frame => ({ _tag: "Thought", size })) },
  { weight: 2, arbitrary: FastCheck.constant<Frame>({ _tag: "Heartbeat" }) },
  { weight: 1, arbitrary: FastCheck.constant<Frame>({ _tag: "Error" }) },
  { weight: 1, arbitrary: FastCheck.constant<Frame>({ _tag: "Unknown" }) },
  { weight: 1, arbitrary: FastCheck.constant<Frame>({ _tag: "Malformed" }) }
)

const stepArb: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  { weight: 10, arbitrary: frameArb.map((f): Step => ({ _tag: "Send", frame: f })) },
  { weight: 2, arbitrary: FastCheck.constant<Step>({ _tag: "Duplicate" }) },
  { weight: 1, arbitrary: FastCheck.integer({ min: 1, max: 90 }).map((seconds): Step => ({ _tag: "Stall", seconds })) }
)

/** Close codes: normal, abnormal, refusals, superseded, reserved and private ones. */
export const closeCodes = [1000, 1001, 1006, 1008, 1011, 1013, 3000, 4000, 4001, 4003, 4401, 4403, 4999] as const

const endArb: FastCheck.Arbitrary<End> = FastCheck.oneof(
  { weight: 6, arbitrary: FastCheck.constantFrom(...closeCodes).map((code): End => ({ _tag: "Close", code })) },
  { weight: 2, arbitrary: FastCheck.constant<End>({ _tag: "Complete" }) },
  { weight: 1, arbitrary: FastCheck.constant<End>({ _tag: "Silent" }) }
)

export const connectionArb: FastCheck.Arbitrary<Connection> = FastCheck.record({
  replay: FastCheck.oneof({ weight: 3, arbitrary: FastCheck.constant(0) }, { weight: 2, arbitrary: FastCheck.integer({ min: 1, max: 4 }) }),
  steps: FastCheck.array(stepArb, { maxLength: 10 }),
  end: endArb,
  split: FastCheck.integer({ min: 1, max: 4 })
})

export const scriptArb = (maxConnections = 5): FastCheck.Arbitrary<Script> =>
  FastCheck.record({
    connections: FastCheck.array(connectionArb, { minLength: 1, maxLength: maxConnections }),
    replays: FastCheck.boolean(),
    failOnFrameError: FastCheck.boolean(),
    maxActions: FastCheck.integer({ min: 1, max: 12 })
  })

/** The frames a connection sends, in order: the replay of the previous one's, then its steps. */
export const framesOf = (connection: Connection, previous: ReadonlyArray<string>): Array<string | Stall> => {
  const out: Array<string | Stall> = previous.slice(Math.max(0, previous.length - connection.replay))
  let last: string | undefined = out.filter((x): x is string => typeof x === "string").at(-1)
  for (const step of connection.steps) {
    if (step._tag === "Stall") out.push({ stall: step.seconds })
    else if (step._tag === "Duplicate") {
      if (last !== undefined) out.push(last)
    } else {
      last = render(step.frame)
      out.push(last)
    }
  }
  return out
}

/** A stall among a connection's frames. */
export interface Stall {
  readonly stall: number
}

/** What the run saw, from both sides. */
export interface Observed {
  /** Per connection, the frames the client received (read off its socket), in order. */
  readonly received: ReadonlyArray<ReadonlyArray<string>>
  /** The events and the final failure delivered, in order. */
  readonly delivered: ReadonlyArray<Either.Either<SessionEvent.SessionEvent, AgentSessionError>>
  /** Whether the stream ended within the bound. */
  readonly ended: boolean
  /** Answers `respond` accepted: their action session ids. */
  readonly accepted: ReadonlyArray<string>
  /**
   * Answers written to a connection, in order: the action session id, the connection (its index
   * among the client's sockets) and whether it got through there: a frame that is not a
   * keep-alive arrived after it on that connection, or the service ended that connection with
   * 1000 or `complete`.
   */
  readonly written: ReadonlyArray<{ readonly id: string; readonly socket: number; readonly through: boolean }>
  /** The index of the client's last socket. */
  readonly lastSocket: number
  /** The final state. */
  readonly state: EventStream.ConnectionState
}

const decode = Wire.makeDecoder("event-data", { maxFrameSize: MAX_FRAME, strict: false })

const isKeepAlive = (event: SessionEvent.SessionEvent) => event._tag === "Heartbeat" || event._tag === "Connected"

/** Whether a frame the client received proves that what it wrote before got through: an event, not a keep-alive. */
export const confirms = (text: string): boolean => {
  const decoded = decode(text)
  return Either.isRight(decoded) && !isKeepAlive(decoded.right)
}

/** The promises, checked on one run. */
export const check = (script: Script, observed: Observed): void => {
  assert.isTrue(observed.ended, "every wait is bounded: the stream ended")
  const failure = observed.delivered.find(Either.isLeft)
  if (failure !== undefined) {
    assert.strictEqual(observed.delivered.at(-1), failure, "a failure is the stream's last element")
  }
  const events = observed.delivered.flatMap((r) => (Either.isRight(r) ? [r.right] : []))
  const eventTexts = events.map((event) => event._tag)

  // What the client received, decoded, per connection; up to the stream's end.
  type Item = { readonly text: string; readonly event: SessionEvent.SessionEvent | undefined; readonly connection: number }
  const items: Array<Item> = []
  let stop = false
  observed.received.forEach((frames, connection) => {
    for (const text of frames) {
      if (stop) return
      const decoded = decode(text)
      if (Either.isLeft(decoded)) {
        if (script.failOnFrameError) stop = true
        items.push({ text, event: undefined, connection })
        continue
      }
      items.push({ text, event: decoded.right, connection })
      if (decoded.right._tag === "Complete") stop = true
    }
  })
  const all = items.filter((item): item is Item & { event: SessionEvent.SessionEvent } => item.event !== undefined)
  const actionsDelivered = events.filter((event) => event._tag === "ActionRun").length

  // The budget: past max_actions the run fails at the overrun, and nothing is delivered after it.
  const last = observed.delivered.at(-1)
  const overrun = last !== undefined && Either.isLeft(last) && last.left._tag === "ActionBudgetExceeded" ? last.left : undefined
  if (overrun !== undefined) {
    assert.strictEqual(actionsDelivered, script.maxActions + 1, "the overrun is the first action over the budget")
    assert.strictEqual(events.at(-1)?._tag, "ActionRun", "nothing after the overrun")
    assert.strictEqual(overrun.actions, script.maxActions + 1)
  } else {
    assert.isAtMost(actionsDelivered, script.maxActions, "past the budget without ActionBudgetExceeded")
  }
  // What the engine received, up to the overrun when there is one.
  let actionsSeen = 0
  const valid = overrun === undefined ? all : all.filter((item) => {
    if (actionsSeen > script.maxActions) return false
    if (item.event._tag === "ActionRun") actionsSeen += 1
    return true
  })

  if (!script.replays) {
    // Not known to replay: exactly what was received (up to the overrun), in order; each action counted once.
    assert.deepStrictEqual(eventTexts, valid.map((item) => item.event._tag), "delivered = received, in order")
    assert.strictEqual(actionsDelivered, valid.filter((item) => item.event._tag === "ActionRun").length)
  } else {
    // Known to replay: what is delivered is what was received, in order, less dropped frames,
    // each a copy of an event delivered before it; never fewer actions than the newest connection sent.
    let i = 0
    const deliveredSoFar = new Set<string>()
    for (const item of all) {
      const next = events[i]
      if (next !== undefined && sameEvent(next, item.event)) {
        if (!isKeepAlive(next)) deliveredSoFar.add(item.text)
        i += 1
        continue
      }
      // After the overrun the façade stops reading: what the engine still took in is not delivered.
      if (overrun !== undefined && i === events.length) break
      assert.isFalse(isKeepAlive(item.event), "a keep-alive is never dropped")
      assert.isTrue(deliveredSoFar.has(item.text), `a dropped frame is a copy of one delivered before: ${item.text.slice(0, 80)}`)
    }
    assert.strictEqual(i, events.length, "nothing delivered that was not received, in order")
    if (overrun === undefined) {
      const lastConnection = Math.max(-1, ...all.map((item) => item.connection))
      const newest = all.filter((item) => item.connection === lastConnection && item.event._tag === "ActionRun").length
      assert.isAtLeast(actionsDelivered, newest, "never fewer actions than the newest connection sent")
    }
  }

  // No answer lost: every accepted answer got through on some connection (by the rule the SDK
  // promises: a later frame, or a clean end), or is reported unsent.
  assert.strictEqual(observed.state._tag, "Closed", "the connection is closed for good")
  const closed = observed.state._tag === "Closed" ? observed.state : undefined
  const unsent = (closed?.unsent ?? []).map((u) => u.actionSessionId)
  const cleanEnd = closed !== undefined && ["complete", "closed-by-service", "closed-by-caller", "error-event"].includes(closed.reason)
  for (const id of new Set(observed.accepted)) {
    const through = observed.written.some((w) =>
      w.id === id && (w.through || (cleanEnd && w.socket === observed.lastSocket))
    )
    assert.isTrue(through || unsent.includes(id), `the answer to ${id.slice(0, 20)} was lost: not through, not reported unsent`)
  }
}

/** Two decoded events are the same event (by their wire form). */
const sameEvent = (a: SessionEvent.SessionEvent, b: SessionEvent.SessionEvent): boolean =>
  Wire.encodeEvent("event-data", a) === Wire.encodeEvent("event-data", b)
