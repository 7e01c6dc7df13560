/**
 * The session an error happened to: every error met after a session was created carries the
 * session's id and whether the session may still be running at the service (so the caller can
 * attach to it again, or stop it). An error met on a session's event channel is rebuilt with the
 * fields {@link added} says; each edition rebuilds it by its tag with its own error classes.
 *
 * @example
 * ```ts
 * import { SessionContext } from "effect-agent-session-shell"
 *
 * console.log(SessionContext.added({ _tag: "ConnectionLost" }, "s-1")) // { sessionId: "s-1", mayStillBeRunning: true }
 * console.log(SessionContext.added({ _tag: "HandshakeRejected", code: 404 }, "s-1").mayStillBeRunning) // false
 * ```
 *
 * @since 0.1.0
 */
import { Failures } from "effect-agent-session-core"

/**
 * The fields added to an error of a session: its id (unless the error names its session itself),
 * and whether the session may still be running.
 *
 * @since 0.1.0
 * @category models
 */
export interface Added {
  readonly sessionId?: string
  readonly mayStillBeRunning: boolean
}

/**
 * The tags of the errors that name their session themselves (`NeverConnected`: the session its
 * channel was for): their id is kept.
 *
 * @since 0.1.0
 * @category models
 */
export const namesItsSession: ReadonlySet<string> = new Set(["NeverConnected"])

/**
 * The fields to add to an error met on the event channel of session `sessionId`: the id (unless
 * the error names its session itself, {@link namesItsSession}) and whether the session may still
 * be running (`Failures.mayStillBeRunning`: yes, unless the service said there is no such session).
 *
 * @since 0.1.0
 * @category constructors
 */
export const added = (error: { readonly _tag: string; readonly code?: number }, sessionId: string): Added =>
  namesItsSession.has(error._tag)
    ? { mayStillBeRunning: Failures.mayStillBeRunning(error) }
    : { sessionId, mayStillBeRunning: Failures.mayStillBeRunning(error) }
