/**
 * The caller's answer to an `external_resource_requested` event.
 *
 * The declarations of the public module `Answer`, written once for both editions:
 * each edition's `src/Answer.ts` is its entry point and re-exports them.
 *
 * @since 0.1.0
 */
import type * as Option from "effect/Option"
import { optionFromNullable } from "../src/internal/line.js"

/**
 * Grant the request, with the input the agent asked for where it asked for one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Grant {
  readonly _tag: "Grant"
  readonly input: Option.Option<string>
}

/**
 * Deny the request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Deny {
  readonly _tag: "Deny"
}

/**
 * An answer: {@link grant} or {@link deny}.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = Grant | Deny

/**
 * Grants a request, optionally with input (for `request_user_input`).
 *
 * @example
 * ```ts
 * import { Answer } from "effect-agent-session"
 *
 * const approve = Answer.grant()
 * const fill = Answer.grant("jane@example.com")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const grant = (input?: string): Answer => ({ _tag: "Grant", input: optionFromNullable(input) })

/**
 * Denies a request. A function, like {@link grant}: `Answer.deny()`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deny = (): Answer => ({ _tag: "Deny" })

/**
 * Whether the answer grants the request.
 *
 * @since 0.1.0
 * @category guards
 */
export const isGrant = (answer: Answer): answer is Grant => answer._tag === "Grant"
