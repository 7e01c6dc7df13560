/**
 * Recordings written by hand for the replay tests of the core and both editions: the conformance
 * suite's (a header and the lines after it, as the format documents them, and the file they are
 * written to). The editions' test/recording/helpers.ts re-export them.
 */
export * from "effect-agent-session-conformance/recordings"
