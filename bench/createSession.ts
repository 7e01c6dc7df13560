/** Create-session overhead (placeholder until src/AgentApi.ts and the simulator are there). */
import type { CreateSessionResult, Task } from "./child.js"

/** Runs the create-session comparison. */
export const run = (_task: Extract<Task, { kind: "createSession" }>): Promise<CreateSessionResult> =>
  Promise.reject(new Error("AgentApi / Simulator not available yet"))
