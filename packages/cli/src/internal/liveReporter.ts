/**
 * The live view of a run on a terminal (`Render.live`): finished lines scroll above a block of
 * three lines redrawn in place. Everything it shows of the service is made safe
 * (`Sanitize.line`, `Sanitize.block`) before it is put between the view's own escape codes.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Metrics from "effect-agent-session/Metrics"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type { Progress, Reporter, Sink } from "./renderTypes.js"
import {
  bar,
  clean,
  describeAnswer,
  describeRequest,
  describeState,
  eventLine,
  maxText,
  outcomeLines,
  soFarLines,
  truncate
} from "./renderText.js"

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

/** `Render.live`: the live view's reporter (the block: the bar, the current action, the latest thought). */
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
