/**
 * The scenarios both editions must pass against the reference simulator. Each is plain data: the
 * simulator's flags, the program, and what must hold (`scenario.ts`). The simulator's script is
 * deterministic: each `action_run` says `(action i of n)` and each thought `Step i of n`, so a
 * client that got every event exactly once, in order, sees `1..n` once each, in order.
 */
import { everyVariant, type Scenario, type SimulatorFlags, type Variant } from "./scenario.js"

const request = { start_url: "https://example.com/", max_actions: 8, goal: "Find the opening hours" }

/** Five actions, a frame every 5 ms, no request, no fault. */
const plain: SimulatorFlags = { actions: 5, ask: "none", frameDelay: 5, faults: [] }

const webSocketOnly: ReadonlyArray<Variant> = [
  { transport: "websocket", dialect: "documented" },
  { transport: "websocket", dialect: "observed" }
]

/** The plain simulator replaying its last 3 events on each reconnect, the connection dropped after the 4th and the 8th. */
const replaying: SimulatorFlags = { ...plain, faults: ["drop-after=4,8", "replay-on-reconnect=3"] }

/** An event of the simulator's script with no request: its tag, and its action or step number. */
interface ScriptEvent {
  readonly tag: string
  readonly action?: number
  readonly step?: number
}

/** The simulator's script of `n` actions with no request, in order. */
const scriptOf = (n: number): ReadonlyArray<ScriptEvent> => [
  { tag: "Started" },
  { tag: "BrowserStarted" },
  ...Array.from({ length: n }, (_, i): ReadonlyArray<ScriptEvent> => [
    { tag: "ThoughtsAndMemories", step: i + 1 },
    { tag: "ActionRun", action: i + 1 }
  ]).flat(),
  { tag: "Complete" }
]

/**
 * What a client not told of the replay receives from `replaying`: connection 1 sends events 1-4,
 * connection 2 sends 2-8 (2-4 again), connection 3 sends 6 to the end (6-8 again).
 */
const replayedTwice: ReadonlyArray<ScriptEvent> = ((script) => [...script.slice(0, 4), ...script.slice(1, 8), ...script.slice(5)])(
  scriptOf(plain.actions)
)

/** Defaults of a scenario: the plain simulator, `start`, every request granted, the key checked. */
const scenario = (
  fields: Pick<Scenario, "name" | "proves" | "expect"> & Partial<Omit<Scenario, "name" | "proves" | "expect">>
): Scenario => ({
  variants: everyVariant,
  simulator: plain,
  request,
  program: { _tag: "start" },
  answer: { _tag: "Grant" },
  start: {},
  witness: false,
  ...fields
})

export const scenarios: ReadonlyArray<Scenario> = [
  scenario({
    name: "U08 U17 a whole session runs to complete: every event once, in order",
    proves: ["U08", "U17"],
    expect: {
      first: {
        ending: "Complete",
        whole: 5,
        actions: 5,
        requests: 0,
        opens: [0],
        closed: "complete",
        counts: { ExternalResourceRequested: 0 }
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U15 U16 an input request answered: the answer reaches the service once",
    proves: ["U15", "U16"],
    simulator: { ...plain, ask: "input" },
    answer: { _tag: "Grant", input: "jane@example.com" },
    expect: {
      first: {
        ending: "Complete",
        whole: 5,
        requests: 1,
        closed: "complete",
        counts: { ExternalResourceRequested: 1 },
        echoes: [[true, "jane@example.com"]]
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U15 U16 a permission request denied: the denial reaches the service once, the session completes",
    proves: ["U15", "U16"],
    simulator: { ...plain, ask: "permission" },
    answer: { _tag: "Deny" },
    expect: {
      first: { ending: "Complete", whole: 5, requests: 1, counts: { ExternalResourceRequested: 1 }, echoes: [[false, null]] },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U17 U16 a connection dropped three times mid-session resumes: nothing lost, nothing twice, the answer once",
    proves: ["U17", "U16"],
    simulator: { ...plain, ask: "input", faults: ["drop-after=2,5,8"] },
    answer: { _tag: "Grant", input: "jane@example.com" },
    expect: {
      first: {
        ending: "Complete",
        whole: 5,
        actions: 5,
        requests: 1,
        opens: [0, 1, 2, 3],
        echoes: [[true, "jane@example.com"]]
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U20 actions beyond max_actions fail the run with ActionBudgetExceeded",
    proves: ["U20"],
    simulator: { ...plain, faults: ["exceed-max-actions=2"] },
    request: { ...request, max_actions: 3 },
    expect: {
      first: { ending: "ActionBudgetExceeded", counts: { ActionRun: 4, Complete: 0 }, errorFields: { maxActions: 3, actions: 4 } },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U21 a create answered 503 twice is sent again with the same Idempotency-Key: one session",
    proves: ["U21", "U07"],
    variants: [...webSocketOnly, { transport: "sse", dialect: "observed" }],
    simulator: { ...plain, faults: ["fail-503=2"] },
    httpRetries: 3,
    witness: true,
    expect: {
      first: { ending: "Complete", whole: 5 },
      keyNeverInError: true,
      http: { createStatuses: [503, 503, 200], oneIdempotencyKey: true, sessionsCreated: 1 }
    }
  }),
  scenario({
    name: "U21 a create answered 429 with Retry-After: 1 is sent again after at least a second: one session",
    proves: ["U21"],
    variants: webSocketOnly,
    simulator: { ...plain, faults: ["rate-limit=1:1"] },
    httpRetries: 3,
    witness: true,
    expect: {
      first: { ending: "Complete", whole: 5 },
      keyNeverInError: true,
      http: { createStatuses: [429, 200], oneIdempotencyKey: true, sessionsCreated: 1, waitedAtLeastMs: 950 }
    }
  }),
  scenario({
    name: "U08 U12 a refused message handshake is HandshakeRejected (close 1008) at once, never retried, the key in none of it",
    proves: ["U08", "U12"],
    variants: [{ transport: "websocket", dialect: "documented" }],
    simulator: { ...plain, faults: ["reject-handshake"] },
    expect: {
      first: { ending: "HandshakeRejected", tags: [], keepAlives: 0, neverRetried: true, closed: "handshake-rejected", errorFields: { code: 1008 } },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U08 U12 a refused handshake in the query or over SSE is HandshakeRejected (401) at once, never retried, the key in none of it",
    proves: ["U08", "U12"],
    variants: everyVariant.filter((v) => v.transport === "sse" || v.dialect === "observed"),
    simulator: { ...plain, faults: ["reject-handshake"] },
    expect: {
      first: { ending: "HandshakeRejected", tags: [], keepAlives: 0, neverRetried: true, closed: "handshake-rejected", errorFields: { code: 401 } },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U12 a wrong key fails the start with Unauthorized before any event: the create refused (401) once, not retried",
    proves: ["U12"],
    wrongKey: "not-the-key-SECRET",
    httpRetries: 3,
    witness: true,
    expect: {
      first: { ending: "Unauthorized", tags: [], keepAlives: 0, errorFields: { status: 401 } },
      keyNeverInError: true,
      http: { createStatuses: [401], oneIdempotencyKey: true, sessionsCreated: 0 }
    }
  }),
  scenario({
    name: "issue 20 a service that replays its last 3 events on each reconnect, declared (replaysOnReconnect): every event exactly once",
    proves: ["issue 20"],
    simulator: replaying,
    start: { replaysOnReconnect: true },
    expect: {
      first: {
        ending: "Complete",
        whole: 5,
        tags: scriptOf(plain.actions).map((event) => event.tag),
        actions: 5,
        opens: [0, 1, 2],
        closed: "complete"
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "issue 20 the same service, not declared: the replayed events are delivered again, none lost, the repeats counted",
    proves: ["issue 20"],
    simulator: replaying,
    // The budget guard counts every action delivered: the overrun reported, the session watched to its end.
    start: { onBudgetExceeded: "report" },
    expect: {
      first: {
        ending: "Complete",
        tags: replayedTwice.map((event) => event.tag),
        actionNumbers: replayedTwice.flatMap((event) => (event.action === undefined ? [] : [event.action])),
        stepNumbers: replayedTwice.flatMap((event) => (event.step === undefined ? [] : [event.step])),
        // More than the service ran, never fewer.
        actions: replayedTwice.filter((event) => event.tag === "ActionRun").length,
        opens: [0, 1, 2]
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U22 a stalled connection triggers the idle time-out and a reconnect; nothing is lost",
    proves: ["U22"],
    simulator: { ...plain, faults: ["stall-after=3:1500"] },
    start: { idleTimeoutMs: 300 },
    expect: {
      first: { ending: "Complete", whole: 5, actions: 5, reconnectedFor: "idle time-out", opens: [0, 1], closed: "complete" },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U22 U16 dropped three times and stalled once: the idle time-out reconnects, each drop and the stall reopen once, nothing lost, the answer once",
    proves: ["U22", "U16"],
    simulator: { ...plain, ask: "input", faults: ["drop-after=2,5,8", "stall-after=3:1500"] },
    answer: { _tag: "Grant", input: "jane@example.com" },
    start: { idleTimeoutMs: 300 },
    expect: {
      first: {
        ending: "Complete",
        whole: 5,
        echoes: [[true, "jane@example.com"]],
        reconnectedFor: "idle time-out",
        // The three drops and the stall each reopened once.
        opens: [0, 1, 2, 3, 4],
        closed: "complete"
      },
      keyNeverInError: true
    }
  }),
  // Over SSE the simulator ends a superseded stream without saying why (docs/reliability.md).
  scenario({
    name: "issue 20 a superseded connection ends with Superseded and never takes the session back; the newer watcher gets the rest",
    proves: ["U17", "issue 20"],
    variants: webSocketOnly,
    simulator: { ...plain, frameDelay: 30 },
    program: { _tag: "supersede", afterEvents: 3 },
    expect: {
      first: { ending: "Superseded", opens: [0], neverRetried: true, closed: "superseded" },
      second: { ending: "Complete", opens: [0] },
      togetherWhole: 5,
      keyNeverInError: true
    }
  }),
  // Only a socket that reads on while it closes (`ws`, as `NodeAgentSessions` makes) can be
  // drained: over SSE a drain is a close, and the events in flight are lost to both watchers.
  // A frame every millisecond: the session still runs when the lagging watcher drains.
  scenario({
    name: "U17 a drained connection: every event the service sent before the caller's close arrives, no reconnect; the next watcher gets the rest",
    proves: ["U17"],
    variants: webSocketOnly,
    simulator: { ...plain, actions: 500, frameDelay: 1 },
    request: { ...request, max_actions: 500 },
    start: { bufferSize: 16 },
    program: { _tag: "drain", afterEvents: 3, lagMs: 300 },
    expect: {
      first: {
        ending: "SessionEndedWithoutComplete",
        counts: { Started: 1, BrowserStarted: 1, Complete: 0 },
        opens: [0],
        neverRetried: true,
        closed: "closed-by-caller"
      },
      second: { ending: "Complete", counts: { Started: 0, BrowserStarted: 0, Complete: 1 }, opens: [0], closed: "complete" },
      togetherWhole: 500,
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U22 a frame over maxFrameSize fails with FrameTooLarge after the events before it",
    proves: ["U22"],
    simulator: { ...plain, faults: ["oversize-at=3:100000"] },
    start: { maxFrameSize: 64 * 1024 },
    expect: {
      first: {
        ending: "FrameTooLarge",
        tags: ["Started", "BrowserStarted"],
        neverRetried: true,
        closed: "failed",
        errorFields: { limit: 64 * 1024 },
        errorFieldsAbove: { size: 64 * 1024 }
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U09 a malformed frame fails with MalformedFrame after the events before it",
    proves: ["U09"],
    simulator: { ...plain, faults: ["malformed-at=3"] },
    expect: {
      first: { ending: "MalformedFrame", tags: ["Started", "BrowserStarted"], neverRetried: true, closed: "failed" },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U09 an unknown event arrives as Unrecognized, its name kept, and the session completes",
    proves: ["U09"],
    simulator: { ...plain, faults: ["unknown-event-at=3"] },
    expect: {
      first: { ending: "Complete", whole: 5, unrecognized: ["mystery_event"], actions: 5, opens: [0], closed: "complete" },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U09 in strict mode an unknown event fails with UnknownEvent naming it, after the events before it (a frame of 100 kB among them)",
    proves: ["U09"],
    simulator: { ...plain, faults: ["oversize-at=3:100000", "unknown-event-at=5"] },
    start: { strict: true },
    expect: {
      first: {
        ending: "UnknownEvent",
        tags: ["Started", "BrowserStarted", "ThoughtsAndMemories", "ThoughtsAndMemories", "ActionRun"],
        neverRetried: true,
        closed: "failed",
        errorFields: { event: "mystery_event" }
      },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U09 with failOnFrameError: false a malformed frame is skipped and the session completes",
    proves: ["U09"],
    simulator: { ...plain, faults: ["malformed-at=3"] },
    start: { failOnFrameError: false },
    expect: {
      first: { ending: "Complete", whole: 5, actions: 5, opens: [0], closed: "complete" },
      keyNeverInError: true
    }
  }),
  scenario({
    name: "U17 a session attached after it completed: the socket closes at once, no event again, SessionEndedWithoutComplete",
    proves: ["U17", "U04"],
    variants: webSocketOnly,
    program: { _tag: "attachAfterComplete" },
    expect: {
      first: { ending: "Complete", whole: 5 },
      second: { ending: "SessionEndedWithoutComplete", tags: [], opens: [0], neverRetried: true },
      keyNeverInError: true
    }
  }),
  ...([
    ["websocket", "the close (1011)", "1011"],
    ["sse", "the stream's end (an event stream has no close code)", "ended"]
  ] as const).map(([transport, what, lastError]) =>
    scenario({
      name: `U17 a channel that keeps closing before complete ends with ConnectionLost carrying ${what}, after its reconnects`,
      proves: ["U17"],
      variants: everyVariant.filter((v) => v.transport === transport),
      simulator: { ...plain, faults: ["close-before-complete"] },
      reconnectRetries: 2,
      expect: {
        first: { ending: "ConnectionLost", errorFields: { attempts: 3 }, errorFieldsInclude: { lastError } },
        keyNeverInError: true
      }
    })
  ),
  // An event stream has no close code: its end before `complete` looks like a drop, retried.
  scenario({
    name: "U17 a session attached after it completed over SSE: each stream ends at once, no event again, then ConnectionLost",
    proves: ["U17", "U04"],
    variants: [{ transport: "sse", dialect: "documented" }, { transport: "sse", dialect: "observed" }],
    program: { _tag: "attachAfterComplete" },
    expect: {
      first: { ending: "Complete", whole: 5 },
      second: { ending: "ConnectionLost", tags: [], errorFields: { mayStillBeRunning: true } },
      keyNeverInError: true
    }
  })
]
