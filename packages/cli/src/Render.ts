/**
 * How `run` shows a session: a live block redrawn in place on a terminal, plain lines when
 * standard output is not a terminal, or one JSON object per line (`--json`).
 *
 * Everything is written through a {@link Sink} so tests can capture it.
 *
 * @since 0.1.0
 */
import type * as Option from "effect/Option"
import type { Outcome } from "effect-agent-session/AgentSessions"
import type { ConnectionState } from "effect-agent-session/EventStream"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import * as jsonReporter from "./internal/jsonReporter.js"
import * as liveReporter from "./internal/liveReporter.js"
import * as plainReporter from "./internal/plainReporter.js"
import * as progressRecord from "./internal/progress.js"
import * as renderText from "./internal/renderText.js"
import type { Progress, Reporter, Sink } from "./internal/renderTypes.js"
import * as terminalInput from "./internal/terminalInput.js"
import * as Sanitize from "./Sanitize.js"

export type {
  /**
   * Where output goes. `out` and `err` are the render boundary: what they are given (text of the
   * service included) is written with every control character escaped (`Sanitize.block`), so they
   * never carry an escape code. `draw` is the live view's own channel: its cursor and colour codes,
   * around service text it made safe itself (`Sanitize.line`).
   *
   * @since 0.1.0
   * @category models
   */
  Sink,
  /**
   * What has happened so far in a session.
   *
   * @since 0.1.0
   * @category models
   */
  Progress,
  /**
   * How an answer was decided.
   *
   * @since 0.1.0
   * @category models
   */
  AnswerSource,
  /**
   * The renderer of one `run`.
   *
   * @since 0.1.0
   * @category models
   */
  Reporter
} from "./internal/renderTypes.js"

/**
 * Turns echo off on the process's terminal and consumes what is typed (raw mode), until
 * {@link unmuteProcessInput}. Ctrl-C still interrupts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const muteProcessInput: () => void = terminalInput.mute

/**
 * Restores the process's terminal after {@link muteProcessInput}: echo and line editing back.
 * Safe to call at any time, and more than once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unmuteProcessInput: () => void = terminalInput.unmute

/**
 * A {@link Sink} over raw writers: `out` and `err` escape every control character
 * (`Sanitize.block`) before writing; `draw` writes to `out` as it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sinkOf = (raw: {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly columns: () => number
  readonly muteInput?: (() => void) | undefined
  readonly unmuteInput?: (() => void) | undefined
}): Sink => ({
  out: (text) => raw.out(Sanitize.block(text)),
  err: (text) => raw.err(Sanitize.block(text)),
  draw: raw.out,
  columns: raw.columns,
  muteInput: raw.muteInput,
  unmuteInput: raw.unmuteInput
})

/**
 * Standard output and standard error of the process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const processSink: Sink = sinkOf({
  out: (text) => {
    process.stdout.write(text)
  },
  err: (text) => {
    process.stderr.write(text)
  },
  // A pseudo-terminal without a size reports 0 columns.
  columns: () => (process.stdout.columns ?? 0) > 0 ? process.stdout.columns : 80,
  muteInput: muteProcessInput,
  unmuteInput: unmuteProcessInput
})

/**
 * A fresh progress record.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeProgress: (maxActions: number | undefined, options?: { readonly attached?: boolean }) => Progress =
  progressRecord.makeProgress

/**
 * Updates the progress with one event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const track: (progress: Progress, event: SessionEvent.SessionEvent) => void = progressRecord.track

/**
 * Cuts a line to a width, with an ellipsis.
 *
 * @since 0.1.0
 * @category combinators
 */
export const truncate: (text: string, width: number) => string = renderText.truncate

/**
 * A progress bar of `done` against `total`, such as `[#####-----] 3/5`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bar: (done: number, total: number, width?: number, fill?: string, empty?: string) => string = renderText.bar

/**
 * The response of an outcome rendered per its type: JSON pretty-printed (raw when it does not
 * parse), Markdown and strings as they are. Not yet made safe for a terminal (`Sanitize.block`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const renderResponse: (outcome: Pick<Outcome, "response" | "type" | "complete">) => string = renderText.renderResponse

/**
 * The cost line of an outcome (no unit is assumed).
 *
 * @since 0.1.0
 * @category accessors
 */
export const formatCost: (cost: Option.Option<number>) => string = renderText.formatCost

/**
 * The command that reattaches to a session, one line for a POSIX shell: the id quoted
 * (`Sanitize.shellWord`), and `--max-actions` when the session's budget is known.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reattachCommand: (sessionId: string, maxActions: Option.Option<number>) => string = renderText.reattachCommand

/**
 * The notice of a session that may still be running (and paid for) at the service, with the
 * command that reattaches to it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const orphanNotice: (sessionId: string, maxActions: Option.Option<number>) => string = renderText.orphanNotice

/**
 * The notice of a create request that was sent and not answered (interrupted, or its answer
 * lost): a session may exist, and the `Idempotency-Key` that asks a service honouring it for that
 * session rather than a new one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createNotice: (idempotencyKey: string) => string = renderText.createNotice

/**
 * Applies a connection state to the progress; returns whether it is worth reporting.
 *
 * @since 0.1.0
 * @category combinators
 */
export const trackState: (progress: Progress, state: ConnectionState) => boolean = progressRecord.trackState

/**
 * One line per event; no bar, no colours. `statusNotes`: whether {@link Reporter.status} notes
 * are written (on standard error; the command line writes them when standard error is a terminal).
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain: (sink: Sink, options?: { readonly statusNotes?: boolean }) => Reporter = plainReporter.plain

/**
 * An event as plain JSON: the wire name and payload (`{event, data}`) plus the SDK tag, the
 * time it was received, and the action count for `action_run` (`maxActions` null when not known).
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventJson: (event: SessionEvent.SessionEvent, progress: Progress) => Record<string, unknown> =
  jsonReporter.eventJson

/**
 * One JSON object per line on standard output (`Sanitize.json`: no control character, every
 * string as the service sent it once parsed); errors also go to standard error as one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const json: (sink: Sink, options?: { readonly statusNotes?: boolean }) => Reporter = jsonReporter.json

/**
 * The live view: finished lines scroll above a block of three lines redrawn in place (the bar
 * of actions used against `max_actions` with the connection state, the current action, the
 * latest thought). Everything it shows of the service is made safe (`Sanitize.line`,
 * `Sanitize.block`) before it is put between the view's own escape codes and drawn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const live: (sink: Sink, options?: { readonly color?: boolean }) => Reporter = liveReporter.live
