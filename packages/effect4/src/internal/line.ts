/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Duration from "effect/Duration"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe
