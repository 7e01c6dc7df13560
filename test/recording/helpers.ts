/** The hand-written recordings of the replay tests, shared with the Effect 4 edition. */
export * from "../../packages/core/test/helpers/recordings.js"
