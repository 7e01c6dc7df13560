/**
 * The names of Effect 4 that a program written once for both editions and run outside vitest
 * (`test/shared/scenarios.ts`, copied from the Effect 3 edition, which Bun, Deno and Node run as a
 * child process) uses where Effect 3 names the same thing differently. `line.ts` cannot serve it:
 * it imports `@effect/vitest`, which only a test run can load. Where a name is also `line.ts`'s, it
 * means the same. The Effect 3 edition's `test/helpers/programLine.ts` exports the same names.
 */
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

export * as FetchHttpClient from "effect/http/FetchHttpClient"

/** The stream of a subscription ref's values: the current one, then each change. */
export const changesOf = <A>(ref: SubscriptionRef.SubscriptionRef<A>): Stream.Stream<A> => SubscriptionRef.changes(ref)

/** One pull of `Stream.toPull`: the chunk it took; its failure is the stream's (or its end). */
export const pullOnce = <A, E, R>(pull: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => pull

/** A schedule of `times` retries, `spacingMs` apart. */
export const spacedRetries = (spacingMs: number, times: number) =>
  Schedule.spaced(Duration.millis(spacingMs)).pipe(Schedule.upTo({ times }))
