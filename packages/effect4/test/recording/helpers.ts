/** The hand-written recordings of the replay tests, shared with the Effect 3 edition. */
export * from "../../../core/test/helpers/recordings.js"
