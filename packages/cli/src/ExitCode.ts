/**
 * The exit codes of the command line, one per error family, and the one-line message shown for
 * each failure.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
// The cluster's errors alone: this module loads none of the cluster's (optional) packages.
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import type { AgentSessionError } from "effect-agent-session/Errors"
import { isAgentSessionError } from "effect-agent-session/Errors"
import { shellWord } from "./Sanitize.js"

/**
 * The exit codes, documented in `docs/cli.md`.
 *
 * @since 0.1.0
 * @category models
 */
export const ExitCode = {
  /** The session completed (or the command succeeded). */
  ok: 0,
  /** Anything unexpected (a bug). */
  internal: 1,
  /** Usage or invalid input: bad flags, `InvalidRequest`, `MissingCredentials`, `InsecureTransport`. */
  usage: 2,
  /** Authentication: `Unauthorized`, `Forbidden`, `HandshakeRejected`, `MissingAgentKey`. */
  authentication: 3,
  /** Rate limit exhausted: `RateLimited` after the retries. */
  rateLimited: 4,
  /** Connection lost: `ConnectionLost`, `NeverConnected`, `ConnectTimeout`, `TransportError`, `RequestTimeout`. */
  connectionLost: 5,
  /** The agent ran more actions than `--max-actions`: `ActionBudgetExceeded`. */
  budgetExceeded: 6,
  /** The session ended without `complete`: `SessionEndedWithoutComplete`. */
  endedWithoutComplete: 7,
  /** Any other error of the service or the event channel, and the cluster's (`ClusterUnavailable`, `EventLogError`). */
  serviceError: 8,
  /** `onboard --save-key`: the agent was registered, its key could not be written (it was printed instead). */
  keyNotSaved: 9,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
  /** Terminated (SIGTERM), after closing cleanly. */
  terminated: 143
} as const

/**
 * @since 0.1.0
 * @category models
 */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * A failure of the command line itself (bad flag combination, missing configuration): exit 2.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * The exit code of each error family of the SDK, by tag: every `_tag` of `AgentSessionError` (the
 * type asks for each, so a new family is placed here when it is added; a test holds
 * `docs/cli.md`'s table to the same codes).
 *
 * @since 0.1.0
 * @category models
 */
export const forTag: { readonly [Tag in AgentSessionError["_tag"]]: ExitCode } = {
  InvalidRequest: ExitCode.usage,
  MissingCredentials: ExitCode.usage,
  InsecureTransport: ExitCode.usage,
  Unauthorized: ExitCode.authentication,
  Forbidden: ExitCode.authentication,
  HandshakeRejected: ExitCode.authentication,
  MissingAgentKey: ExitCode.authentication,
  RateLimited: ExitCode.rateLimited,
  ConnectionLost: ExitCode.connectionLost,
  ConnectTimeout: ExitCode.connectionLost,
  NeverConnected: ExitCode.connectionLost,
  BufferOverflow: ExitCode.connectionLost,
  TransportError: ExitCode.connectionLost,
  RequestTimeout: ExitCode.connectionLost,
  ActionBudgetExceeded: ExitCode.budgetExceeded,
  SessionEndedWithoutComplete: ExitCode.endedWithoutComplete,
  BadRequest: ExitCode.serviceError,
  NotFound: ExitCode.serviceError,
  Conflict: ExitCode.serviceError,
  PayloadTooLarge: ExitCode.serviceError,
  ServerError: ExitCode.serviceError,
  UnexpectedStatus: ExitCode.serviceError,
  ResponseDecodeError: ExitCode.serviceError,
  ResponseTooLarge: ExitCode.serviceError,
  OutcomeUnknown: ExitCode.serviceError,
  MalformedFrame: ExitCode.serviceError,
  EventDecodeError: ExitCode.serviceError,
  FrameTooLarge: ExitCode.serviceError,
  UnknownEvent: ExitCode.serviceError,
  Superseded: ExitCode.serviceError,
  RequestNotPending: ExitCode.serviceError,
  AnswerBufferFull: ExitCode.serviceError,
  ResponseParseError: ExitCode.serviceError,
  RecordingFailed: ExitCode.serviceError,
  InvalidRecording: ExitCode.serviceError,
  ReplayMismatch: ExitCode.serviceError
}

/**
 * The exit code of an SDK error (its family's, {@link forTag}).
 *
 * @since 0.1.0
 * @category accessors
 */
export const forError = (error: AgentSessionError): ExitCode =>
  replayRefusal(error) !== undefined
    ? ExitCode.serviceError
    : // An error of a newer SDK than this table (a tag it does not know) is the service's side.
    Object.hasOwn(forTag, error._tag)
    ? forTag[error._tag]
    : ExitCode.serviceError

/**
 * What `simulate --replay` said when it closed the event channel (1008, its reason `replay: ...`:
 * an answer or a request that differs from the recording): not a refused key, so neither its
 * message nor its exit code (8, as `ReplayMismatch`) say so.
 */
const replayRefusal = (error: AgentSessionError): string | undefined =>
  error._tag === "HandshakeRejected" && typeof error.reason === "string" && error.reason.startsWith("replay: ")
    ? error.reason.slice("replay: ".length)
    : undefined

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/**
 * The one-line message of an SDK error, with a hint where the user can act.
 *
 * @since 0.1.0
 * @category accessors
 */
export const describe = (error: AgentSessionError): string => {
  switch (error._tag) {
    case "MissingCredentials":
      return `no API key: set ${error.variable} or pass --api-key (or --agent-key)`
    case "MissingAgentKey":
      return oneLine(error.message)
    case "Unauthorized":
    case "Forbidden":
      return `the service refused the key (${error.status} ${error._tag}): ${
        oneLine(error.message)
      }; check AGENT_SESSION_API_KEY, --api-key or --agent-key`
    case "HandshakeRejected": {
      const replay = replayRefusal(error)
      if (replay !== undefined) {
        // A close reason holds 123 bytes: the replay cuts a longer one, and prints it whole.
        return `replay mismatch: simulate --replay closed the event channel (${error.code}): ${oneLine(replay)}${
          replay.endsWith("...") ? " (the simulator's output has the whole difference)" : ""
        }`
      }
      return `the event channel refused the key: ${oneLine(error.message)}; check AGENT_SESSION_API_KEY, --api-key or --agent-key`
    }
    case "RateLimited":
      return `rate limited (429) and out of retries: ${oneLine(error.message)}${
        Option.match(error.retryAfter, { onNone: () => "", onSome: () => " (the service asked to wait longer)" })
      }`
    case "InvalidRequest":
      return `invalid ${error.subject}: ${oneLine(error.message)}`
    case "TransportError":
      return `cannot reach the service (${error.operation}): ${oneLine(error.message)}; check --base-url (AGENT_SESSION_BASE_URL)`
    case "InsecureTransport":
      return `refusing to send the key in clear to ${error.url}: use https:// (wss://), or pass --allow-insecure`
    case "NeverConnected":
      return `the event channel never connected: ${oneLine(error.lastError)} (${error.attempts} attempts); check AGENT_SESSION_WS_URL or --ws-url`
    case "Superseded":
      return `another watcher took the session (the service closed this connection with 4000: ${
        oneLine(error.reason)
      }); it goes on there: this command stopped watching rather than take it back`
    case "OutcomeUnknown":
      return error.operation.endsWith("createSession")
        ? `${oneLine(error.message)}; to get that session rather than a second one from a service that honours the key, ` +
          `run the same command with --idempotency-key ${shellWord(error.idempotencyKey)}`
        : `${oneLine(error.message)}; check the service before running again`
    default:
      return `${error._tag}: ${oneLine(error.message)}`
  }
}

/**
 * The exit code and one-line message of any failure.
 *
 * @since 0.1.0
 * @category accessors
 */
export const classify = (error: unknown): { readonly code: ExitCode; readonly message: string } => {
  if (isAgentSessionError(error)) return { code: forError(error), message: describe(error) }
  // The cluster commands' own errors (`ClusterUnavailable`, `EventLogError`): the service's side.
  if (ClusterErrors.isClusterError(error)) {
    return { code: ExitCode.serviceError, message: `${error._tag}: ${oneLine(error.message)}` }
  }
  if (error instanceof UsageError) return { code: ExitCode.usage, message: error.message }
  if (Predicate.isTagged(error, "QuitException")) return { code: ExitCode.interrupted, message: "interrupted" }
  const message = error instanceof Error ? error.message : String(error)
  return { code: ExitCode.internal, message: oneLine(message) }
}

/**
 * The message of a failure of the first request, with a hint at `--dialect` where the service
 * answered `NotFound` or `Unauthorized`: the usual sign of a service that speaks the other
 * dialect (another sessions path, another auth header).
 *
 * @since 0.1.0
 * @category accessors
 */
export const withDialectHint = (
  error: unknown,
  message: string,
  dialect: "documented" | "observed"
): string =>
  isAgentSessionError(error) && (error._tag === "NotFound" || error._tag === "Unauthorized")
    ? `${message}; if the service speaks the other dialect, try --dialect ${
      dialect === "documented" ? "observed" : "documented"
    } (or AGENT_SESSION_DIALECT)`
    : message

/**
 * Ends a command with an exit code, after it has reported why.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliExit extends Data.TaggedError("CliExit")<{ readonly code: ExitCode }> {}
