/**
 * `effect-agent-session simulate` (placeholder until the simulator exists).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"

/**
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("simulate", {}, () => Effect.void)
