/**
 * The names of Effect 3 that the cluster's tests written once for both cluster editions
 * (`test/shared/`, copied to the Effect 4 edition's `cluster/test/shared/`) use where Effect 4
 * names the same thing differently; the Effect 4 cluster's `cluster/test/helpers/line.ts` exports
 * the same names, bound to Effect 4.
 */
import * as Effect from "effect/Effect"

/** Forks an effect as a child of the current fiber. */
export const forkChild = Effect.fork

/** Gives the scheduler a turn. */
export const yieldNow = (): Effect.Effect<void> => Effect.yieldNow()
