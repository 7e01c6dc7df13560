/** Flow control is the protocol core's (`Flow`). */
import { Flow as Core } from "effect-agent-session-core"

export type Flow = Core.Flow
export const Flow = Core.Flow
