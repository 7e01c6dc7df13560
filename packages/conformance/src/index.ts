/**
 * The conformance suite of effect-agent-session: the scenarios both editions must pass against
 * the reference simulator, as plain data and plain TypeScript (no Effect), and what each edition's
 * runner needs to judge them.
 */
export * from "./scenario.js"
export { scenarios } from "./scenarios.js"
export { replayScenarios, testAccountKey } from "./replays.js"
export { recordingPath } from "./recordings.js"
export * from "./verdict.js"
export * from "./observe.js"
export * from "./witness.js"
export * from "./actingServer.js"
export * from "./paid.js"
export * from "./hostileServer.js"
export * from "./hostile.js"
export * from "./runtimes.js"
