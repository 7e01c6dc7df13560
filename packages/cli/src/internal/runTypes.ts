/**
 * The types of `run` (`Run`'s `RunFlags`, `AnswerPolicy` and `Environment`), written below the
 * session loop and the answer policy that use them so that every import runs one way.
 * Re-exported by `Run`.
 */
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as CliConfig from "../Config.js"
import type { Sink } from "./renderTypes.js"

/**
 * The parsed flags of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunFlags extends CliConfig.ConnectionFlags {
  readonly goal: string
  readonly startUrl: string
  /** The session's `max_actions`; `attach` may not know it (no budget guard, no bar). */
  readonly maxActions: Option.Option<number>
  readonly agentKey: Option.Option<Redacted.Redacted<string>>
  readonly approve: boolean
  readonly deny: boolean
  readonly input: Option.Option<string>
  readonly json: boolean
  readonly metrics: boolean
  readonly maxReconnects: Option.Option<number>
  /** `run`: the create request's `Idempotency-Key` (default: a fresh random one). */
  readonly idempotencyKey: Option.Option<string>
  /** `--record FILE`: the session recorded to this file. */
  readonly record: Option.Option<string>
}

/**
 * How the agent's requests are answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerPolicy {
  readonly approve: boolean
  readonly deny: boolean
  readonly input: Option.Option<string>
  /** Whether a person can be asked (standard input and output are terminals, not `--json`). */
  readonly interactive: boolean
}

/**
 * Where `run` writes, and whether it may draw live or prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly sink: Sink
  readonly stdoutIsTTY: boolean
  readonly stdinIsTTY: boolean
  /** Whether a person watches standard error: the notes of what the command waits for go there. */
  readonly stderrIsTTY: boolean
  readonly color: boolean
}
