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

/**
 * Where output goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sink {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
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
 * Standard output and standard error of the process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const processSink: Sink = {
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
}

/**
 * What has happened so far in a session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  sessionId: Option.Option<string>
  maxActions: number
  actions: number
  events: number
  reconnects: number
  lastAction: Option.Option<SessionEvent.ActionRun>
  lastThought: Option.Option<string>
  lastError: Option.Option<string>
  answers: number
  connection: string
}

/**
 * A fresh progress record.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeProgress = (maxActions: number): Progress => ({
  sessionId: Option.none(),
  maxActions,
  actions: 0,
  events: 0,
  reconnects: 0,
  lastAction: Option.none(),
  lastThought: Option.none(),
  lastError: Option.none(),
  answers: 0,
  connection: "connecting"
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

const singleLine = (text: string): string => text.replace(/\s+/g, " ").trim()

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

/**
 * The response of an outcome rendered per its type: JSON pretty-printed (raw when it does not
 * parse), Markdown and strings as they are.
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

const describeRequest = (request: SessionEvent.ExternalResourceRequested): string => {
  const kind = SessionEvent.resourceTypeRaw(request.resource_type)
  const field = Option.match(request.field_name, { onNone: () => "", onSome: (f) => ` [field ${f}]` })
  return `${kind}${field}: ${singleLine(request.reason)}`
}

const describeAnswer = (answer: Answer.Answer, source: AnswerSource): string => {
  const how = source === "flag" ? " (from flags)" : source === "no-terminal" ? " (no terminal to ask: pass --approve or --input)" : ""
  if (answer._tag === "Deny") return `denied${how}`
  return Option.match(answer.input, {
    onNone: () => `granted${how}`,
    onSome: (input) => `granted with input "${singleLine(input)}"${how}`
  })
}

const describeState = (state: ConnectionState): Option.Option<string> => {
  switch (state._tag) {
    case "Reconnecting":
      return Option.some(`connection lost, reconnecting (attempt ${state.attempt}): ${singleLine(state.lastError)}`)
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
      return `closed (${state.reason})`
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
  if (label === progress.connection) return false
  progress.connection = label
  if (state._tag === "Open") progress.reconnects = state.reconnects
  return true
}

const eventLine = (event: SessionEvent.SessionEvent, progress: Progress): Option.Option<string> => {
  switch (event._tag) {
    case "Started":
      return Option.some(`started on ${event.start_url}`)
    case "BrowserStarted":
      return Option.some(`browser started at ${event.url}`)
    case "ActionRun":
      return Option.some(`action ${progress.actions}/${progress.maxActions}: ${event.name}: ${singleLine(event.content)}`)
    case "ThoughtsAndMemories":
      return Option.some(`thought: ${singleLine(event.thought)}`)
    case "AgentError":
      return Option.some(`agent error: ${singleLine(event.error)}`)
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
      return Option.some(`unrecognized event "${event.event}"`)
  }
}

const outcomeLines = (outcome: Outcome): Array<string> => [
  `Outcome (${SessionEvent.responseTypeRaw(outcome.type)}):`,
  renderResponse(outcome),
  "",
  `Total cost: ${formatCost(outcome.totalCost)}`,
  `Actions: ${outcome.actions}/${outcome.maxActions}`,
  ...Option.match(outcome.budgetExceeded, { onNone: () => [], onSome: (e) => [`Warning: ${e.message}`] })
]

const soFarLines = (progress: Progress): Array<string> => [
  `Interrupted: the connection was closed (1000).`,
  `Session: ${Option.getOrElse(progress.sessionId, () => "(not created)")}`,
  `Done so far: ${progress.actions}/${progress.maxActions} actions, ${progress.events} events, ${progress.reconnects} reconnects`,
  ...Option.match(progress.lastAction, {
    onNone: () => [],
    onSome: (a) => [`Last action: ${a.name}: ${singleLine(a.content)}`]
  }),
  ...Option.match(progress.lastThought, { onNone: () => [], onSome: (t) => [`Last thought: ${singleLine(t)}`] })
]

// ---------------------------------------------------------------------------
// Plain lines (not a terminal)
// ---------------------------------------------------------------------------

/**
 * One line per event; no bar, no colours.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain = (sink: Sink): Reporter => {
  const line = (text: string) => Effect.sync(() => sink.out(text + "\n"))
  return {
    created: (sessionId, progress) => line(`session ${sessionId} created (max ${progress.maxActions} actions)`),
    event: (event, progress) =>
      Option.match(eventLine(event, progress), { onNone: () => Effect.void, onSome: line }),
    state: (state) => Option.match(describeState(state), { onNone: () => Effect.void, onSome: line }),
    answered: (request, answer, source) =>
      line(`answered ${SessionEvent.resourceTypeRaw(request.resource_type)}: ${describeAnswer(answer, source)}`),
    note: (text) => line(text),
    suspend: (effect) => effect,
    outcome: (outcome) => line("\n" + outcomeLines(outcome).join("\n")),
    failure: (message, _tag, _code, progress) =>
      Effect.sync(() => {
        sink.err(`error: ${message}\n`)
        if (progress.events > 0) {
          sink.out(`Done so far: ${progress.actions}/${progress.maxActions} actions, ${progress.events} events\n`)
        }
      }),
    interrupted: (progress) => line("\n" + soFarLines(progress).join("\n")),
    metrics: (readings) => line("\n" + ["Metrics", ...Metrics.format(readings).map((l) => "  " + l)].join("\n"))
  }
}

// ---------------------------------------------------------------------------
// NDJSON (--json)
// ---------------------------------------------------------------------------

/**
 * An event as plain JSON: the wire name and payload (`{event, data}`) plus the SDK tag, the
 * time it was received, and the action count for `action_run`.
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
    ...(event._tag === "ActionRun" ? { action: progress.actions, maxActions: progress.maxActions } : {}),
    at: new Date().toISOString()
  }
}

/**
 * One JSON object per line on standard output; errors also go to standard error as one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = (sink: Sink): Reporter => {
  const emit = (value: Record<string, unknown>) => Effect.sync(() => sink.out(JSON.stringify(value) + "\n"))
  return {
    created: (sessionId, progress) => emit({ kind: "session", sessionId, maxActions: progress.maxActions }),
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
    outcome: (outcome) => {
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
        maxActions: outcome.maxActions
      })
    },
    failure: (message, tag, code, progress) =>
      Effect.zipRight(
        emit({ kind: "error", tag, message, exitCode: code, actions: progress.actions, events: progress.events }),
        Effect.sync(() => sink.err(`error: ${message}\n`))
      ),
    interrupted: (progress) =>
      emit({
        kind: "interrupted",
        sessionId: Option.getOrNull(progress.sessionId),
        actions: progress.actions,
        maxActions: progress.maxActions,
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
 * latest thought).
 *
 * @since 0.1.0
 * @category constructors
 */
export const live = (sink: Sink, options: { readonly color?: boolean } = {}): Reporter => {
  const style = options.color === false ? plainStyle : ansi
  let drawn = 0
  let active = false

  const clear = () => {
    if (drawn > 0) sink.out(style.up(drawn) + style.clearBelow)
    drawn = 0
  }

  const block = (progress: Progress): Array<string> => {
    const width = Math.max(20, sink.columns() - 1)
    const connection = progress.connection.startsWith("reconnecting")
      ? style.yellow(progress.connection)
      : style.dim(progress.connection)
    const actionText = Option.match(progress.lastAction, {
      onNone: () => style.dim("waiting for the first action"),
      onSome: (a) => `${style.bold(a.name)} ${singleLine(a.content)}`
    })
    const thought = Option.match(progress.lastThought, { onNone: () => "", onSome: singleLine })
    // Lines are cut to the width so the block never wraps (wrapping breaks the redraw).
    return [
      truncateVisible(`${style.cyan(bar(progress.actions, progress.maxActions))} actions  ${connection}`, width),
      `  ${style.dim("action")}  ${truncateVisible(actionText, width - 10)}`,
      `  ${style.dim("thought")} ${truncate(thought, width - 10)}`
    ]
  }

  const draw = (progress: Progress) => {
    if (!active) return
    clear()
    const lines = block(progress)
    sink.out(lines.join("\n") + "\n")
    drawn = lines.length
  }

  const print = (text: string, progress: Progress) =>
    Effect.sync(() => {
      clear()
      sink.out(text + "\n")
      draw(progress)
    })

  const stop = () => {
    clear()
    if (active) sink.out(style.showCursor)
    active = false
    sink.unmuteInput?.()
  }

  return {
    created: (sessionId, progress) =>
      Effect.sync(() => {
        active = true
        sink.muteInput?.()
        sink.out(style.hideCursor)
        sink.out(`${style.bold("session")} ${sessionId} ${style.dim(`(max ${progress.maxActions} actions)`)}\n`)
        draw(progress)
      }),
    event: (event, progress) => {
      switch (event._tag) {
        case "ActionRun":
          return print(
            style.dim(`  ${progress.actions}. ${event.name}: ${truncate(singleLine(event.content), sink.columns() - 12)}`),
            progress
          )
        case "ThoughtsAndMemories":
        case "Heartbeat":
          return Effect.sync(() => draw(progress))
        case "AgentError":
          return print(style.red(`agent error: ${singleLine(event.error)}`), progress)
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
          SessionEvent.resourceTypeRaw(request.resource_type)
        }: ${describeAnswer(answer, source)}`,
        progress
      ),
    note: (text, progress) => print(text, progress),
    suspend: (effect) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const was = active
          clear()
          if (was) sink.out(style.showCursor)
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
              sink.out(style.hideCursor)
            }
          })
      ),
    outcome: (outcome, progress) =>
      Effect.sync(() => {
        draw(progress)
        // Leave the final bar on screen, then the outcome below it.
        drawn = 0
        if (active) sink.out(style.showCursor)
        active = false
        sink.unmuteInput?.()
        const [head, ...rest] = outcomeLines(outcome)
        sink.out("\n" + style.bold(style.green(head ?? "")) + "\n" + rest.join("\n") + "\n")
      }),
    failure: (message, _tag, _code, progress) =>
      Effect.sync(() => {
        const had = active
        stop()
        if (had) {
          for (const l of block(progress)) sink.out(l + "\n")
        }
        sink.err(style.red(`error: ${message}`) + "\n")
      }),
    interrupted: (progress) =>
      Effect.sync(() => {
        stop()
        sink.out("\n" + soFarLines(progress).join("\n") + "\n")
      }),
    metrics: (readings) =>
      Effect.sync(() => {
        stop()
        sink.out("\n" + style.bold("Metrics") + "\n" + Metrics.format(readings).map((l) => "  " + l).join("\n") + "\n")
      })
  }
}

// Truncates text that may hold ANSI codes, counting only visible characters.
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
