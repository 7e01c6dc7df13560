/**
 * The event channel's tap: what a recorder sees of one connection, at the boundary
 * between a transport and the engine (`transport.ts`), so that it records what the service sent,
 * byte for byte, before anything decodes it.
 *
 * A recorder sets {@link currentTap} around `EventStream.connect` (`Effect.locally`); the
 * service's `connectEngine` reads it once and, when it is set, wraps its transport with
 * {@link tapped}. Without a recorder nothing is wrapped: the frame path is the same as before.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Scope from "effect/Scope"
import type * as Dialect from "../../Dialect.js"
import { BufferOverflow } from "../../Errors.js"
import type * as Wire from "../../Wire.js"
import { AttemptHooks } from "../../../binding/internal/channel/shell.js"
import type { AttemptOutcome, Hooks, Io, SendFailure, Transport } from "../../../binding/internal/channel/transport.js"

/** What a recorder is told, synchronously, from the transport's callbacks. */
export interface ChannelTap {
  /** The connection was made: its session, dialect and transport. */
  readonly started: (info: {
    readonly sessionId: string
    readonly dialect: Dialect.Dialect
    readonly transport: "websocket" | "sse"
  }) => void
  /** Connection number `conn` (1, 2, ...) is being opened. */
  readonly connect: (conn: number) => void
  readonly open: (conn: number) => void
  readonly frame: (conn: number, data: string | Uint8Array) => void
  readonly namedEvent: (conn: number, name: string, data: string) => void
  readonly tooLarge: (conn: number, size: number) => void
  /** Bytes without an event (an SSE comment). */
  readonly alive: (conn: number) => void
  /** An answer was written, and what became of it. */
  readonly sent: (conn: number, data: Wire.AnswerData, result: "confirmed" | "written" | SendFailure) => void
  /** The connection ended: how (the attempt's outcome; an interruption when the application closed it). */
  readonly ended: (conn: number, opened: boolean, exit: Exit.Exit<unknown, unknown>) => void
}

/** The tap of the connections made by the current fiber, if any. */
export const currentTap: FiberRef.FiberRef<ChannelTap | undefined> = globalValue(
  Symbol.for("effect-agent-session/internal/channel/tap"),
  () => FiberRef.unsafeMake<ChannelTap | undefined>(undefined)
)

/** Whether the engine still takes what the transport reports (a socket of an earlier attempt may still talk). */
const live = (hooks: Hooks): boolean => !(hooks instanceof AttemptHooks) || hooks.live

/**
 * The outcome of an attempt, read from how its scope closed. An overflow (decided by the core on a
 * socket that cannot pause) is kept as the `BufferOverflow` it ends the events with.
 */
export const outcomeOf = (
  exit: Exit.Exit<unknown, unknown>
): Exclude<AttemptOutcome, { readonly _tag: "Defect" | "Overflow" }> | "interrupted" | "defect" => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value
    if (typeof value !== "object" || value === null || !("_tag" in value)) return "defect"
    const outcome = value as AttemptOutcome
    if (outcome._tag === "Overflow") {
      return { _tag: "Fatal", error: new BufferOverflow({ limit: outcome.limit }), reason: "failed" }
    }
    return outcome._tag === "Defect" ? "defect" : outcome
  }
  return Exit.isInterrupted(exit) ? "interrupted" : "defect"
}

/** A transport whose attempts are reported to the tap. */
export const tapped = (
  tap: ChannelTap,
  transport: Transport,
  info: Parameters<ChannelTap["started"]>[0]
): Transport => {
  tap.started(info)
  let count = 0
  return (hooks) =>
    Effect.suspend(() => {
      count += 1
      const conn = count
      let opened = false
      tap.connect(conn)
      const io = (inner: Io): Io => ({
        send: (frame, data) =>
          Effect.onExit(inner.send(frame, data), (exit) =>
            Effect.sync(() => {
              if (Exit.isSuccess(exit)) tap.sent(conn, data, exit.value)
              else if (Exit.isFailure(exit) && exit.cause._tag === "Fail") tap.sent(conn, data, exit.cause.error)
            })),
        pause: () => inner.pause(),
        resume: () => inner.resume(),
        abort: () => inner.abort(),
        close: () => inner.close?.(),
        drain: () => inner.drain?.() ?? false
      })
      const wrapped: Hooks = {
        get sessionId() {
          return hooks.sessionId
        },
        get settings() {
          return hooks.settings
        },
        scope: () => hooks.scope(),
        get key() {
          return hooks.key
        },
        get deadlines() {
          return hooks.deadlines
        },
        attach: (inner, pausable) => hooks.attach(io(inner), pausable),
        open: () => {
          if (!opened && live(hooks)) {
            opened = true
            tap.open(conn)
          }
          hooks.open()
        },
        frame: (data) => {
          if (live(hooks)) tap.frame(conn, data)
          hooks.frame(data)
        },
        namedEvent: (name, data) => {
          if (live(hooks)) tap.namedEvent(conn, name, data)
          hooks.namedEvent(name, data)
        },
        tooLarge: (size) => {
          if (live(hooks)) tap.tooLarge(conn, size)
          hooks.tooLarge(size)
        },
        alive: () => {
          if (live(hooks)) tap.alive(conn)
          hooks.alive()
        },
        end: (outcome) => hooks.end(outcome)
      }
      // The attempt's scope closes with its outcome (or the caller's interruption).
      return Effect.zipRight(
        Scope.addFinalizerExit(hooks.scope(), (exit) => Effect.sync(() => tap.ended(conn, opened, exit))),
        transport(wrapped)
      )
    })
}

/** The transport as it is, or tapped when the current fiber has a tap (read once per connection). */
export const tapTransport = (
  transport: Transport,
  info: Parameters<ChannelTap["started"]>[0]
): Effect.Effect<Transport> =>
  Effect.map(FiberRef.get(currentTap), (tap) => (tap === undefined ? transport : tapped(tap, transport, info)))
