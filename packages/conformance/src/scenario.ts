/**
 * What a conformance scenario is: plain data, read by each edition's runner.
 */

/** The transports of the event channel. */
export type Transport = "websocket" | "sse"

/** The dialects the simulator speaks. */
export type DialectName = "documented" | "observed"

/** A transport and a dialect a scenario runs in. */
export interface Variant {
  readonly transport: Transport
  readonly dialect: DialectName
}

/** Every transport in every dialect. */
export const everyVariant: ReadonlyArray<Variant> = [
  { transport: "websocket", dialect: "documented" },
  { transport: "websocket", dialect: "observed" },
  { transport: "sse", dialect: "documented" },
  { transport: "sse", dialect: "observed" }
]

/** The simulator's flags (`simulate --actions --ask --frame-delay --fault ...`); the dialect comes from the variant. */
export interface SimulatorFlags {
  /** The actions the scripted agent runs (at most `max_actions`). */
  readonly actions: number
  /** What the agent asks in the middle of its run. */
  readonly ask: "none" | "input" | "permission"
  /** Milliseconds before each event frame. */
  readonly frameDelay: number
  /** `--fault` values, each as the command line takes it: `fail-503=2`, `rate-limit=1:1`, `drop-after=2,5,8`. */
  readonly faults: ReadonlyArray<string>
}

/** The answer the program gives to every request it receives. */
export type GivenAnswer =
  | { readonly _tag: "Grant"; readonly input?: string }
  | { readonly _tag: "Deny" }

/** The session the program creates (`AgentSessions.start`). */
export interface SessionRequest {
  readonly start_url: string
  readonly max_actions: number
  readonly goal: string
}

/** Options of `AgentSessions.start` a scenario sets (`StartOptions`, durations in milliseconds). */
export interface StartOptions {
  readonly maxFrameSize?: number
  readonly failOnFrameError?: boolean
  readonly strict?: boolean
  readonly idleTimeoutMs?: number
  readonly onBudgetExceeded?: "fail" | "report"
  readonly replaysOnReconnect?: boolean
  readonly bufferSize?: number
}

/**
 * What the program does, through `AgentSessions` of the edition under test:
 *
 * - `start`: start a session, consume its events to their end, answering every request.
 * - `supersede`: start a session; after `afterEvents` events attach a second watcher of the same
 *   session (the command line's `attach`) and consume both to their end.
 * - `attachAfterComplete`: start a session, consume it to its end, then attach to the same
 *   session again and consume that.
 * - `drain`: start a session; after `afterEvents` events stop consuming for `lagMs` (reading
 *   pauses: what the service sends meanwhile waits in the sockets' buffers), then drain the
 *   connection (`RunningSession.drain`) while consuming on to the end of its events; then attach
 *   to the same session again and consume that.
 */
export type Program =
  | { readonly _tag: "start" }
  | { readonly _tag: "supersede"; readonly afterEvents: number }
  | { readonly _tag: "attachAfterComplete" }
  | { readonly _tag: "drain"; readonly afterEvents: number; readonly lagMs: number }

/** What must hold of one watcher of a session (each member optional: unset is not checked). */
export interface WatcherExpectation {
  /** How the watcher ended: `Complete` (the events ended after `complete`, the outcome read), or the failure's tag. */
  readonly ending: string
  /**
   * The whole script exactly once, in order: the first event `Started`, the last `Complete`, the
   * action numbers `(action i of n)` and the step numbers `Step i of n` each `1..n` once, in order.
   */
  readonly whole?: number
  /** The tags of the events received (keep-alives aside), exactly, in order. */
  readonly tags?: ReadonlyArray<string>
  /** The action numbers `(action i of n)` of the `ActionRun` events received, exactly, in order (repeats included). */
  readonly actionNumbers?: ReadonlyArray<number>
  /** The step numbers `Step i of n` of the `ThoughtsAndMemories` events received, exactly, in order (repeats included). */
  readonly stepNumbers?: ReadonlyArray<number>
  /** The names of the `Unrecognized` events received (`Unrecognized.event`), exactly, in order. */
  readonly unrecognized?: ReadonlyArray<string>
  /** How many keep-alives (`Heartbeat`, `Connected`) were received. */
  readonly keepAlives?: number
  /** How many events of each tag were received (keep-alives aside); tags not named are not checked. */
  readonly counts?: Readonly<Record<string, number>>
  /** The actions the outcome counted (`Outcome.actions`), when it completed. */
  readonly actions?: number
  /** The answers the simulator echoed (`ExternalResourceGranted`), as `[granted, input]`, in order. */
  readonly echoes?: ReadonlyArray<readonly [boolean, string | null]>
  /** The requests the program was asked to answer. */
  readonly requests?: number
  /** The `reconnects` of each `Open` state, in order (`[0]`: opened once, never again). */
  readonly opens?: ReadonlyArray<number>
  /**
   * The connection's state once the events ended: the reason of `Closed` (`complete`,
   * `superseded`, `handshake-rejected`, `failed`, ...), or the tag of a state that is not `Closed`.
   * An edition may publish `Closed` just after its events fail (Effect 4 does): the runners wait
   * up to 2 s for it.
   */
  readonly closed?: string
  /** A `Reconnecting` state was seen whose `lastError` contains this (`"idle time-out"`). */
  readonly reconnectedFor?: string
  /** No `Reconnecting` state was ever seen: the failure was not retried. */
  readonly neverRetried?: boolean
  /** Fields of the failure that must be equal (`{ maxActions: 3, actions: 4 }`). */
  readonly errorFields?: Readonly<Record<string, string | number | boolean>>
  /** Fields of the failure that must be above a number (`{ size: 65536 }`). */
  readonly errorFieldsAbove?: Readonly<Record<string, number>>
  /** Fields of the failure that must be a text containing this (`{ lastError: "1011" }`). */
  readonly errorFieldsInclude?: Readonly<Record<string, string>>
}

/** What must hold of the HTTP requests the witness recorded (`witness.ts`). */
export interface HttpExpectation {
  /** The statuses answered to the creates (`POST` of the sessions path), in order. */
  readonly createStatuses: ReadonlyArray<number>
  /** Every create of the run carried one and the same `Idempotency-Key`. */
  readonly oneIdempotencyKey: boolean
  /** Distinct sessions the creates were answered with: never more than one per call. */
  readonly sessionsCreated: number
  /** The least time between the first refused create and the next attempt, in milliseconds (a `Retry-After` honoured). */
  readonly waitedAtLeastMs?: number
}

/** What must hold. */
export interface Expectation {
  /** The watcher that started the session. */
  readonly first: WatcherExpectation
  /** The second watcher (`supersede`, `attachAfterComplete`). */
  readonly second?: WatcherExpectation
  /** The events of the first watcher then the second are the whole script exactly once (`supersede`, `drain`). */
  readonly togetherWhole?: number
  /** Neither the account key nor any other secret appears in a failure's text. */
  readonly keyNeverInError: boolean
  /** The HTTP side, seen by the witness. */
  readonly http?: HttpExpectation
}

/** A conformance scenario. */
export interface Scenario {
  /** The test's name: the U-id(s) it proves first, then what it shows. */
  readonly name: string
  /** The U-ids (and issues) it proves. */
  readonly proves: ReadonlyArray<string>
  /** The transports and dialects it runs in. */
  readonly variants: ReadonlyArray<Variant>
  readonly simulator: SimulatorFlags
  readonly request: SessionRequest
  readonly program: Program
  readonly answer: GivenAnswer
  readonly start: StartOptions
  /**
   * The creating call's retries (the HTTP schedule: this many, 10 ms apart; a `Retry-After`
   * honoured over it). Unset: the edition's test default.
   */
  readonly httpRetries?: number
  /**
   * The event channel's reconnects (this many, 10 ms apart) before it gives up with
   * `ConnectionLost`. Unset: the edition's test default.
   */
  readonly reconnectRetries?: number
  /**
   * A key the simulator does not know, held by the SDK in place of the simulator's account key
   * (and, like it, to appear in no failure's text). Unset: the account key.
   */
  readonly wrongKey?: string
  /** Put the recording HTTP proxy (`witness.ts`) between the SDK and the simulator. */
  readonly witness: boolean
  readonly expect: Expectation
}

/** One scenario in one variant: what a runner runs as one test. */
export interface Case {
  /** `<scenario name> (<transport>, <dialect> dialect)` */
  readonly title: string
  readonly scenario: Scenario
  readonly variant: Variant
}

/** Every scenario in each of its variants. */
export const cases = (scenarios: ReadonlyArray<Scenario>): ReadonlyArray<Case> =>
  scenarios.flatMap((scenario) =>
    scenario.variants.map((variant) => ({
      title: `${scenario.name} (${variant.transport}, ${variant.dialect} dialect)`,
      scenario,
      variant
    }))
  )

/**
 * What a replay's program answers each request with: a grant or a denial, or a grant whose input
 * depends on the request's `field_name` (`inputs[field_name]`, else `otherwise`).
 */
export type ReplayAnswer =
  | GivenAnswer
  | { readonly _tag: "GrantByField"; readonly inputs: Readonly<Record<string, string>>; readonly otherwise: string }

/**
 * What a replay's program does, through `AgentSessions` of the edition under test over its
 * in-memory replay (`AgentSessionsTest.replay`), on virtual time:
 *
 * - `run`: `AgentSessions.run(request)`, answering every request with `answer`.
 * - `neverAnswer`: `AgentSessions.start(request)`, its events consumed to their end, no request
 *   ever answered.
 */
export type ReplayProgram =
  | { readonly _tag: "run"; readonly request: SessionRequest; readonly answer: ReplayAnswer }
  | { readonly _tag: "neverAnswer"; readonly request: SessionRequest }

/**
 * The recording a replay reads: its lines (objects written as JSON, strings as they are, each on
 * its own line, in a file named `recording.jsonl`), or a path where there is no file.
 */
export type ReplayFile =
  | { readonly _tag: "Lines"; readonly lines: ReadonlyArray<unknown> }
  | { readonly _tag: "Missing" }

/** Options of the replay (`AgentSessionsTest.replay`'s `ReplayOptions`, durations in milliseconds). */
export interface ReplayOptions {
  readonly answerTimeoutMs?: number
  readonly maxLineLength?: number
  /** A `redact` that writes this in place of every recorded answer's `input`. */
  readonly redactAnswerInput?: string
}

/** What must hold of a replay (each member but `ending` and `keyNeverInError` optional: unset is not checked). */
export interface ReplayExpectation {
  /** How the program ended: `Complete` (its outcome), or the failure's tag. */
  readonly ending: string
  /**
   * Where it failed: the replay's layer itself (the file refused before the program ran), or the
   * program. When `ending` is `Complete`, nothing may have failed anywhere.
   */
  readonly failedIn?: "layer" | "program"
  /** The events the program received (keep-alives aside), exactly, in order. */
  readonly events?: ReadonlyArray<SeenEventExpectation>
  /** The outcome's `response`, when it completed. */
  readonly response?: string
  /** The actions the outcome counted, when it completed. */
  readonly actions?: number
  /** The answers the replay took from the program (`AgentSessionsTest.answers`), as `[granted, input]`, in order. */
  readonly answers?: ReadonlyArray<readonly [boolean, string | null]>
  /** The session ids the program connected to (`AgentSessionsTest.connections`), in order. */
  readonly connections?: ReadonlyArray<string>
  /** The goals of the creates the program made (`AgentSessionsTest.sessionsCreated`), in order. */
  readonly created?: ReadonlyArray<string>
  /** Whether the replay's `AgentApi` answers `getSession` (`canRetrieve`). */
  readonly canRetrieve?: boolean
  /** Fields of the failure that must be equal (`message` among them). */
  readonly errorFields?: Readonly<Record<string, string | number | boolean>>
  /** Fields of the failure (`message` among them) that must contain each text. */
  readonly errorFieldsInclude?: Readonly<Record<string, ReadonlyArray<string>>>
  /** Fields of the failure (`message` among them) that must end with a text. */
  readonly errorFieldsEndWith?: Readonly<Record<string, string>>
  /** The test kit's account key, or any other secret, appears in no text of the failure. */
  readonly keyNeverInError: boolean
}

/** An event as a replay scenario expects it: its tag, and what of it is checked. */
export interface SeenEventExpectation {
  readonly tag: string
  /** `ActionRun.content`, `ThoughtsAndMemories.thought`, `Unrecognized.event`. */
  readonly text?: string
  /** `Unrecognized.payload` as JSON. */
  readonly payload?: string
}

/** A replay scenario: a recording, what the program does over its replay, what must hold. */
export interface ReplayScenario {
  /** The test's name: what it shows (and the issue it proves first). */
  readonly name: string
  /** The issues it proves. */
  readonly proves: ReadonlyArray<string>
  readonly recording: ReplayFile
  readonly options: ReplayOptions
  readonly program: ReplayProgram
  readonly expect: ReplayExpectation
}
