/**
 * The types of the render boundary (`Render`'s `Sink`, `Progress`, `AnswerSource` and
 * `Reporter`), written below the reporters that use them so that every import runs one way.
 * Re-exported by `Render`.
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Outcome } from "effect-agent-session/AgentSessions"
import type * as Answer from "effect-agent-session/Answer"
import type { ConnectionState } from "effect-agent-session/EventStream"
import type * as Metrics from "effect-agent-session/Metrics"
import type * as SessionEvent from "effect-agent-session/SessionEvent"

/**
 * Where output goes. `out` and `err` are the render boundary: what they are given (text of the
 * service included) is written with every control character escaped (`Sanitize.block`), so they
 * never carry an escape code. `draw` is the live view's own channel: its cursor and colour codes,
 * around service text it made safe itself (`Sanitize.line`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Sink {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** Written as it is, to standard output: only the live view's own codes and sanitised text. */
  readonly draw: (text: string) => void
  /** The terminal width, when standard output is a terminal. */
  readonly columns: () => number
  /**
   * While the live view draws, keys typed on the terminal must not echo (an echoed Enter leaves
   * a frozen copy of the bar): `muteInput` turns echo off and consumes the keys (Ctrl-C still
   * interrupts), `unmuteInput` restores the terminal. Both do nothing when standard input is not
   * a terminal.
   */
  readonly muteInput?: (() => void) | undefined
  readonly unmuteInput?: (() => void) | undefined
}

/**
 * What has happened so far in a session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  sessionId: Option.Option<string>
  /** The session's `max_actions`, when known (`attach` without `--max-actions`: not known). */
  maxActions: Option.Option<number>
  actions: number
  events: number
  reconnects: number
  lastAction: Option.Option<SessionEvent.ActionRun>
  lastThought: Option.Option<string>
  lastError: Option.Option<string>
  answers: number
  connection: string
  /** Whether the event channel was open at least once. */
  opened: boolean
  /**
   * While the create request waits for its answer: its `Idempotency-Key`. A session may exist at
   * the service from the moment the request was sent.
   */
  creating: Option.Option<string>
  /**
   * `attach`: the session was not watched from its start, so `actions` counts the `action_run`
   * events this watch saw, not the session's (the service sends no count of its own).
   */
  attached: boolean
}

/**
 * How an answer was decided.
 *
 * @since 0.1.0
 * @category models
 */
export type AnswerSource = "flag" | "prompt" | "no-terminal"

/**
 * The renderer of one `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reporter {
  /** Says what the command is waiting for (`creating session at <url>...`), as it starts waiting. */
  readonly status: (text: string, progress: Progress) => Effect.Effect<void>
  readonly created: (sessionId: string, progress: Progress) => Effect.Effect<void>
  readonly event: (event: SessionEvent.SessionEvent, progress: Progress) => Effect.Effect<void>
  readonly state: (state: ConnectionState, progress: Progress) => Effect.Effect<void>
  readonly answered: (
    request: SessionEvent.ExternalResourceRequested,
    answer: Answer.Answer,
    source: AnswerSource,
    progress: Progress
  ) => Effect.Effect<void>
  readonly note: (text: string, progress: Progress) => Effect.Effect<void>
  /** Runs an effect (a prompt) with the live block cleared. */
  readonly suspend: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly outcome: (outcome: Outcome, progress: Progress) => Effect.Effect<void>
  readonly failure: (message: string, tag: string, code: number, progress: Progress) => Effect.Effect<void>
  readonly interrupted: (progress: Progress) => Effect.Effect<void>
  /** The `--metrics` summary, printed last. */
  readonly metrics: (readings: ReadonlyArray<Metrics.Reading>) => Effect.Effect<void>
}
