/**
 * How `run` shows a session: a live block redrawn in place on a terminal, plain lines when
 * standard output is not a terminal, or one JSON object per line (`--json`).
 *
 * Everything is written through a {@link Sink} so tests can capture it.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Outcome } from "effect-agent-session/AgentSessions"
import type * as Answer from "effect-agent-session/Answer"
import * as Metrics from "effect-agent-session/Metrics"
import type { ConnectionState } from "effect-agent-session/EventStream"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import * as Sanitize from "./Sanitize.js"

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

let muted = false

const onMutedInput = (data: Buffer | string) => {
  const bytes = typeof data === "string" ? Buffer.from(data) : data
  // Raw mode turns the terminal's own signal keys off: Ctrl-C interrupts as it would have.
  if (bytes.includes(0x03)) process.kill(process.pid, "SIGINT")
}

/**
 * Turns echo off on the process's terminal and consumes what is typed (raw mode), until
 * {@link unmuteProcessInput}. Ctrl-C still interrupts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const muteProcessInput = (): void => {
  if (muted || process.stdin.isTTY !== true) return
  muted = true
  process.stdin.setRawMode(true)
  process.stdin.on("data", onMutedInput)
  process.stdin.resume()
}

/**
 * Restores the process's terminal after {@link muteProcessInput}: echo and line editing back.
 * Safe to call at any time, and more than once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unmuteProcessInput = (): void => {
  if (!muted) return
  muted = false
  process.stdin.removeListener("data", onMutedInput)
  if (process.stdin.isTTY === true) process.stdin.setRawMode(false)
  process.stdin.pause()
}

/**
 * A {@link Sink} over raw writers: `out` and `err` escape every control character
 * (`Sanitize.block`) before writing; `draw` writes to `out` as it is.
 *
 * @since 0.3.0
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
}

/**
 * A fresh progress record.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeProgress = (maxActions: number | undefined): Progress => ({
  sessionId: Option.none(),
  maxActions: Option.fromNullable(maxActions),
  actions: 0,
  events: 0,
  reconnects: 0,
  lastAction: Option.none(),
  lastThought: Option.none(),
  lastError: Option.none(),
  answers: 0,
  connection: "connecting",
  opened: false,
  creating: Option.none()
})

/**
 * Updates the progress with one event.
 *
 * @since 0.1.0
 * @category combinators
 */
export const track = (progress: Progress, event: SessionEvent.SessionEvent): void => {
  progress.events += 1
  switch (event._tag) {
    case "ActionRun":
      progress.actions += 1
      progress.lastAction = Option.some(event)
      break
    case "ThoughtsAndMemories":
      progress.lastThought = Option.some(event.thought)
      break
    case "AgentError":
      progress.lastError = Option.some(event.error)
      break
    default:
      break
  }
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

// ---------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------

/** Service text on one line, safe for a terminal. */
const clean = Sanitize.line

/**
 * Cuts a line to a width, with an ellipsis.
 *
 * @since 0.1.0
 * @category combinators
 */
export const truncate = (text: string, width: number): string => {
  const chars = Array.from(text)
  if (chars.length <= width) return text
  return width <= 1 ? chars.slice(0, width).join("") : chars.slice(0, width - 1).join("") + "…"
}

/**
 * A progress bar of `done` against `total`, such as `[#####-----] 3/5`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bar = (done: number, total: number, width = 24, fill = "█", empty = "░"): string => {
  const ratio = total <= 0 ? 1 : Math.min(1, done / total)
  const filled = Math.round(ratio * width)
  return `[${fill.repeat(filled)}${empty.repeat(width - filled)}] ${done}/${total}`
}

/** `3/8`, or `3` when the session's `max_actions` is not known. */
const actionCount = (done: number, progress: Progress): string =>
  Option.match(progress.maxActions, { onNone: () => String(done), onSome: (max) => `${done}/${max}` })

/** ` (max 8 actions)`, or nothing when it is not known. */
const maxText = (progress: Progress): string =>
  Option.match(progress.maxActions, { onNone: () => "", onSome: (max) => ` (max ${max} actions)` })

/**
 * The response of an outcome rendered per its type: JSON pretty-printed (raw when it does not
 * parse), Markdown and strings as they are. Not yet made safe for a terminal (`Sanitize.block`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const renderResponse = (outcome: Pick<Outcome, "response" | "type" | "complete">): string => {
  const type = SessionEvent.responseTypeRaw(outcome.type)
  if (type === "JSON") {
    const parsed = SessionEvent.parseJsonResponse(outcome.complete)
    if (parsed._tag === "Right") return JSON.stringify(parsed.right, null, 2)
  }
  return outcome.response
}

/**
 * The cost line of an outcome (no unit is assumed, U14).
 *
 * @since 0.1.0
 * @category accessors
 */
export const formatCost = (cost: Option.Option<number>): string =>
  Option.match(cost, { onNone: () => "not reported", onSome: (n) => String(n) })

/**
 * The command that reattaches to a session, one line for a POSIX shell: the id quoted
 * (`Sanitize.shellWord`), and `--max-actions` when the session's budget is known.
 *
 * @since 0.3.0
 * @category constructors
 */
export const reattachCommand = (sessionId: string, maxActions: Option.Option<number>): string =>
  `effect-agent-session attach ${Sanitize.shellWord(sessionId)}${
    Option.match(maxActions, { onNone: () => "", onSome: (max) => ` --max-actions ${max}` })
  }`

/**
 * The notice of a session that may still be running (and paid for) at the service, with the
 * command that reattaches to it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const orphanNotice = (sessionId: string, maxActions: Option.Option<number>): string =>
  `session ${clean(sessionId)} may still be running at the service; reattach with: ${reattachCommand(sessionId, maxActions)}`

/**
 * The notice of a create request that was sent and not answered (interrupted, or its answer
 * lost): a session may exist, and the `Idempotency-Key` that asks a service honouring it for that
 * session rather than a new one.
 *
 * @since 0.3.0
 * @category constructors
 */
export const createNotice = (idempotencyKey: string): string =>
  `the create request was sent and not answered: a session may have been created (and be paid for); ` +
  `run the same command with --idempotency-key ${Sanitize.shellWord(idempotencyKey)} to get that session ` +
  `from a service that honours Idempotency-Key, rather than a second one`

const describeRequest = (request: SessionEvent.ExternalResourceRequested): string => {
  const kind = clean(SessionEvent.resourceTypeRaw(request.resource_type))
  const field = Option.match(request.field_name, { onNone: () => "", onSome: (f) => ` [field ${clean(f)}]` })
  return `${kind}${field}: ${clean(request.reason)}`
}

const describeAnswer = (answer: Answer.Answer, source: AnswerSource): string => {
  const how = source === "flag" ? " (from flags)" : source === "no-terminal" ? " (no terminal to ask: pass --approve or --input)" : ""
  if (answer._tag === "Deny") return `denied${how}`
  return Option.match(answer.input, {
    onNone: () => `granted${how}`,
    onSome: (input) => `granted with input "${clean(input)}"${how}`
  })
}

const describeState = (state: ConnectionState): Option.Option<string> => {
  switch (state._tag) {
    case "Reconnecting":
      return Option.some(`connection lost, reconnecting (attempt ${state.attempt}): ${clean(state.lastError)}`)
    case "Open":
      return state.reconnects > 0
        ? Option.some(`reconnected (${state.reconnects} so far${
          Option.match(state.downtime, { onNone: () => "", onSome: (d) => `, down ${Duration.format(d)}` })
        })`)
        : Option.none()
    default:
      return Option.none()
  }
}

const stateLabel = (state: ConnectionState): string => {
  switch (state._tag) {
    case "Connecting":
      return "connecting"
    case "Open":
      return "open"
    case "Reconnecting":
      return `reconnecting (attempt ${state.attempt})`
    case "Closed":
      return `closed (${clean(state.reason)})`
  }
}

/**
 * Applies a connection state to the progress; returns whether it is worth reporting.
 *
 * @since 0.1.0
 * @category combinators
 */
export const trackState = (progress: Progress, state: ConnectionState): boolean => {
  const label = stateLabel(state)
  if (state._tag === "Open") progress.opened = true
  if (label === progress.connection) return false
  progress.connection = label
  if (state._tag === "Open") progress.reconnects = state.reconnects
  return true
}

const eventLine = (event: SessionEvent.SessionEvent, progress: Progress): Option.Option<string> => {
  switch (event._tag) {
    case "Started":
      return Option.some(`started on ${clean(event.start_url)}`)
    case "BrowserStarted":
      return Option.some(`browser started at ${clean(event.url)}`)
    case "ActionRun":
      return Option.some(`action ${actionCount(progress.actions, progress)}: ${clean(event.name)}: ${clean(event.content)}`)
    case "ThoughtsAndMemories":
      return Option.some(`thought: ${clean(event.thought)}`)
    case "AgentError":
      return Option.some(`agent error: ${clean(event.error)}`)
    case "ExternalResourceRequested":
      return Option.some(`the agent asks (${describeRequest(event)})`)
    case "ExternalResourceGranted":
      return Option.some(`the service says the request was ${event.granted ? "granted" : "denied"}`)
    case "Complete":
      return Option.some("complete")
    case "Connected":
      return Option.some("connected")
    case "Heartbeat":
      return Option.none()
    case "Unrecognized":
      return Option.some(`unrecognized event "${clean(event.event)}"`)
  }
}

/** The outcome: a heading, the response (several lines, made safe), the cost and the actions. */
const outcomeLines = (outcome: Outcome, progress: Progress): Array<string> => [
  `Outcome (${clean(SessionEvent.responseTypeRaw(outcome.type))}):`,
  Sanitize.block(renderResponse(outcome)),
  "",
  `Total cost: ${formatCost(outcome.totalCost)}`,
  `Actions: ${actionCount(outcome.actions, progress)}`,
  ...Option.match(outcome.budgetExceeded, { onNone: () => [], onSome: (e) => [`Warning: ${clean(e.message)}`] })
]

const soFarLines = (progress: Progress): Array<string> => {
  if (Option.isSome(progress.creating)) {
    return [
      "Interrupted while creating the session: the create request was sent and not answered.",
      `Idempotency-Key: ${clean(progress.creating.value)}`
    ]
  }
  if (Option.isNone(progress.sessionId)) return ["Interrupted before a session was created."]
  return [
    progress.opened
      ? "Interrupted: the connection was closed (1000)."
      : "Interrupted: the session was created; its event channel had not opened yet.",
    `Session: ${clean(progress.sessionId.value)}`,
    `Done so far: ${actionCount(progress.actions, progress)} actions, ${progress.events} events, ${progress.reconnects} reconnects`,
    ...Option.match(progress.lastAction, {
      onNone: () => [],
      onSome: (a) => [`Last action: ${clean(a.name)}: ${clean(a.content)}`]
    }),
    ...Option.match(progress.lastThought, { onNone: () => [], onSome: (t) => [`Last thought: ${clean(t)}`] })
  ]
}

// ---------------------------------------------------------------------------
// Plain lines (not a terminal)
// ---------------------------------------------------------------------------

/**
 * One line per event; no bar, no colours. `statusNotes`: whether {@link Reporter.status} notes
 * are written (on standard error; the command line writes them when standard error is a terminal).
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain = (sink: Sink, options: { readonly statusNotes?: boolean } = {}): Reporter => {
  const line = (text: string) => Effect.sync(() => sink.out(text + "\n"))
  return {
    status: (text) => options.statusNotes === true ? Effect.sync(() => sink.err(text + "\n")) : Effect.void,
    created: (sessionId, progress) => line(`session ${clean(sessionId)} created${maxText(progress)}`),
    event: (event, progress) =>
      Option.match(eventLine(event, progress), { onNone: () => Effect.void, onSome: line }),
    state: (state) => Option.match(describeState(state), { onNone: () => Effect.void, onSome: line }),
    answered: (request, answer, source) =>
      line(`answered ${clean(SessionEvent.resourceTypeRaw(request.resource_type))}: ${describeAnswer(answer, source)}`),
    note: (text) => line(clean(text)),
    suspend: (effect) => effect,
    outcome: (outcome, progress) => line("\n" + outcomeLines(outcome, progress).join("\n")),
    failure: (message, _tag, _code, progress) =>
      Effect.sync(() => {
        sink.err(`error: ${clean(message)}\n`)
        if (progress.events > 0) {
          sink.out(`Done so far: ${actionCount(progress.actions, progress)} actions, ${progress.events} events\n`)
        }
      }),
    interrupted: (progress) => line("\n" + soFarLines(progress).join("\n")),
    metrics: (readings) => line("\n" + ["Metrics", ...Metrics.format(readings).map((l) => "  " + clean(l))].join("\n"))
  }
}

// ---------------------------------------------------------------------------
// NDJSON (--json)
// ---------------------------------------------------------------------------

/**
 * An event as plain JSON: the wire name and payload (`{event, data}`) plus the SDK tag, the
 * time it was received, and the action count for `action_run` (`maxActions` null when not known).
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventJson = (event: SessionEvent.SessionEvent, progress: Progress): Record<string, unknown> => {
  const wire = SessionEvent.toWire(event)
  return {
    kind: "event",
    event: wire.event,
    tag: event._tag,
    data: wire.payload,
    ...(event._tag === "ActionRun" ? { action: progress.actions, maxActions: Option.getOrNull(progress.maxActions) } : {}),
    at: new Date().toISOString()
  }
}

/**
 * One JSON object per line on standard output (`Sanitize.json`: no control character, every
 * string as the service sent it once parsed); errors also go to standard error as one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = (sink: Sink, options: { readonly statusNotes?: boolean } = {}): Reporter => {
  const emit = (value: Record<string, unknown>) => Effect.sync(() => sink.out(Sanitize.json(value) + "\n"))
  return {
    status: (text) => options.statusNotes === true ? Effect.sync(() => sink.err(text + "\n")) : Effect.void,
    created: (sessionId, progress) =>
      emit({ kind: "session", sessionId, maxActions: Option.getOrNull(progress.maxActions) }),
    event: (event, progress) => emit(eventJson(event, progress)),
    state: (state) =>
      emit({
        kind: "state",
        state: state._tag,
        ...(state._tag === "Reconnecting" ? { attempt: state.attempt, lastError: state.lastError } : {}),
        ...(state._tag === "Open"
          ? {
            reconnects: state.reconnects,
            downtimeMs: Option.getOrNull(Option.map(state.downtime, Duration.toMillis))
          }
          : {}),
        ...(state._tag === "Closed" ? { reason: state.reason } : {})
      }),
    answered: (request, answer, source) =>
      emit({
        kind: "answer",
        resourceType: SessionEvent.resourceTypeRaw(request.resource_type),
        actionSessionId: request.action_session_id,
        granted: answer._tag === "Grant",
        input: answer._tag === "Grant" ? Option.getOrNull(answer.input) : null,
        source
      }),
    note: (text) => emit({ kind: "note", message: text }),
    suspend: (effect) => effect,
    outcome: (outcome, progress) => {
      const parsed = SessionEvent.responseTypeRaw(outcome.type) === "JSON"
        ? SessionEvent.parseJsonResponse(outcome.complete)
        : undefined
      return emit({
        kind: "outcome",
        sessionId: outcome.sessionId,
        type: SessionEvent.responseTypeRaw(outcome.type),
        response: outcome.response,
        ...(parsed !== undefined && parsed._tag === "Right" ? { responseJson: parsed.right } : {}),
        totalCost: Option.getOrNull(outcome.totalCost),
        actions: outcome.actions,
        maxActions: Option.getOrNull(progress.maxActions)
      })
    },
    failure: (message, tag, code, progress) =>
      Effect.zipRight(
        emit({ kind: "error", tag, message, exitCode: code, actions: progress.actions, events: progress.events }),
        Effect.sync(() => sink.err(`error: ${clean(message)}\n`))
      ),
    interrupted: (progress) =>
      emit({
        kind: "interrupted",
        sessionId: Option.getOrNull(progress.sessionId),
        ...(Option.isSome(progress.creating) ? { sessionMayExist: true, idempotencyKey: progress.creating.value } : {}),
        actions: progress.actions,
        maxActions: Option.getOrNull(progress.maxActions),
        events: progress.events,
        lastAction: Option.getOrNull(Option.map(progress.lastAction, (a) => ({ name: a.name, content: a.content }))),
        lastThought: Option.getOrNull(progress.lastThought)
      }),
    metrics: (readings) => emit({ kind: "metrics", metrics: readings })
  }
}

// ---------------------------------------------------------------------------
// Live terminal
// ---------------------------------------------------------------------------

const ansi = {
  hideCursor: "\x1b[?25l",
  showCursor: "\x1b[?25h",
  clearBelow: "\x1b[J",
  up: (n: number) => `\x1b[${n}F`,
  bold: (s: string) => `\x1b[1m${s}\x1b[22m`,
  dim: (s: string) => `\x1b[2m${s}\x1b[22m`,
  green: (s: string) => `\x1b[32m${s}\x1b[39m`,
  yellow: (s: string) => `\x1b[33m${s}\x1b[39m`,
  red: (s: string) => `\x1b[31m${s}\x1b[39m`,
  cyan: (s: string) => `\x1b[36m${s}\x1b[39m`
}

const plainStyle: typeof ansi = {
  ...ansi,
  bold: (s) => s,
  dim: (s) => s,
  green: (s) => s,
  yellow: (s) => s,
  red: (s) => s,
  cyan: (s) => s
}

/**
 * The live view: finished lines scroll above a block of three lines redrawn in place (the bar
 * of actions used against `max_actions` with the connection state, the current action, the
 * latest thought). Everything it shows of the service is made safe (`Sanitize.line`,
 * `Sanitize.block`) before it is put between the view's own escape codes and drawn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const live = (sink: Sink, options: { readonly color?: boolean } = {}): Reporter => {
  const style = options.color === false ? plainStyle : ansi
  let drawn = 0
  let active = false

  const clear = () => {
    if (drawn > 0) sink.draw(style.up(drawn) + style.clearBelow)
    drawn = 0
  }

  const block = (progress: Progress): Array<string> => {
    const width = Math.max(20, sink.columns() - 1)
    const connection = progress.connection.startsWith("reconnecting")
      ? style.yellow(progress.connection)
      : style.dim(progress.connection)
    const actionText = Option.match(progress.lastAction, {
      onNone: () => style.dim("waiting for the first action"),
      onSome: (a) => `${style.bold(clean(a.name))} ${clean(a.content)}`
    })
    const thought = Option.match(progress.lastThought, { onNone: () => "", onSome: clean })
    const count = Option.match(progress.maxActions, {
      onNone: () => String(progress.actions),
      onSome: (max) => bar(progress.actions, max)
    })
    // Lines are cut to the width so the block never wraps (wrapping breaks the redraw).
    return [
      truncateVisible(`${style.cyan(count)} actions  ${connection}`, width),
      `  ${style.dim("action")}  ${truncateVisible(actionText, width - 10)}`,
      `  ${style.dim("thought")} ${truncate(thought, width - 10)}`
    ]
  }

  const draw = (progress: Progress) => {
    if (!active) return
    clear()
    const lines = block(progress)
    sink.draw(lines.join("\n") + "\n")
    drawn = lines.length
  }

  /** Prints a finished line (already safe) above the block. */
  const print = (text: string, progress: Progress) =>
    Effect.sync(() => {
      clear()
      sink.draw(text + "\n")
      draw(progress)
    })

  const stop = () => {
    clear()
    if (active) sink.draw(style.showCursor)
    active = false
    sink.unmuteInput?.()
  }

  return {
    // Before the session exists the block is not drawn: a line of its own. After, above the block.
    status: (text, progress) => print(style.dim(clean(text)), progress),
    created: (sessionId, progress) =>
      Effect.sync(() => {
        active = true
        sink.muteInput?.()
        sink.draw(style.hideCursor)
        sink.draw(`${style.bold("session")} ${clean(sessionId)}${style.dim(maxText(progress))}\n`)
        draw(progress)
      }),
    event: (event, progress) => {
      switch (event._tag) {
        case "ActionRun":
          return print(
            style.dim(`  ${progress.actions}. ${clean(event.name)}: ${truncate(clean(event.content), sink.columns() - 12)}`),
            progress
          )
        case "ThoughtsAndMemories":
        case "Heartbeat":
          return Effect.sync(() => draw(progress))
        case "AgentError":
          return print(style.red(`agent error: ${clean(event.error)}`), progress)
        case "ExternalResourceRequested":
          return print(style.bold(`the agent asks (${describeRequest(event)})`), progress)
        case "Complete":
          return Effect.sync(() => draw(progress))
        default:
          return Option.match(eventLine(event, progress), {
            onNone: () => Effect.sync(() => draw(progress)),
            onSome: (text) => print(style.dim(text), progress)
          })
      }
    },
    state: (state, progress) =>
      Option.match(describeState(state), {
        onNone: () => Effect.sync(() => draw(progress)),
        onSome: (text) => print(style.yellow(text), progress)
      }),
    answered: (request, answer, source, progress) =>
      print(
        `${answer._tag === "Grant" ? style.green("✔") : style.yellow("✘")} ${
          clean(SessionEvent.resourceTypeRaw(request.resource_type))
        }: ${describeAnswer(answer, source)}`,
        progress
      ),
    note: (text, progress) => print(clean(text), progress),
    suspend: (effect) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const was = active
          clear()
          if (was) sink.draw(style.showCursor)
          active = false
          // The prompt reads the keys itself.
          sink.unmuteInput?.()
          return was
        }),
        () => effect,
        (was) =>
          Effect.sync(() => {
            if (was) {
              active = true
              sink.muteInput?.()
              sink.draw(style.hideCursor)
            }
          })
      ),
    outcome: (outcome, progress) =>
      Effect.sync(() => {
        draw(progress)
        // Leave the final bar on screen, then the outcome below it.
        drawn = 0
        if (active) sink.draw(style.showCursor)
        active = false
        sink.unmuteInput?.()
        const [head, ...rest] = outcomeLines(outcome, progress)
        sink.draw("\n" + style.bold(style.green(head ?? "")) + "\n" + rest.join("\n") + "\n")
      }),
    failure: (message, _tag, _code, progress) =>
      Effect.sync(() => {
        const had = active
        stop()
        if (had) {
          for (const l of block(progress)) sink.draw(l + "\n")
        }
        sink.err(`error: ${clean(message)}\n`)
      }),
    interrupted: (progress) =>
      Effect.sync(() => {
        stop()
        sink.out("\n" + soFarLines(progress).join("\n") + "\n")
      }),
    metrics: (readings) =>
      Effect.sync(() => {
        stop()
        sink.draw("\n" + style.bold("Metrics") + "\n" + Metrics.format(readings).map((l) => "  " + clean(l)).join("\n") + "\n")
      })
  }
}

// Truncates text that may hold the view's own ANSI codes (service text in it is already safe, so
// every ESC is one of ours), counting only visible characters.
const truncateVisible = (text: string, width: number): string => {
  let visible = 0
  let out = ""
  const parts = text.split(/(\x1b\[[0-9;?]*[A-Za-z])/)
  for (const part of parts) {
    if (/^\x1b\[/.test(part)) {
      out += part
      continue
    }
    const chars = Array.from(part)
    if (visible + chars.length <= width) {
      out += part
      visible += chars.length
    } else {
      out += chars.slice(0, Math.max(0, width - visible - 1)).join("") + "…"
      visible = width
      break
    }
  }
  return out + (visible >= width ? "\x1b[0m" : "")
}
