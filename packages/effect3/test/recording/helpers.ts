/** The hand-written recordings of the replay tests: the conformance suite's, shared with the Effect 4 edition and the core. */
export * from "effect-agent-session-conformance/recordings"
