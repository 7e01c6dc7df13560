/**
 * The names of Effect 3 that a program written once for both editions and run outside vitest
 * (`test/shared/scenarios.ts`, which Bun, Deno and Node run as a child process) uses where Effect 4
 * names the same thing differently. `line.ts` cannot serve it: it imports `@effect/vitest`, which
 * only a test run can load. Where a name is also `line.ts`'s, it means the same. The Effect 4
 * edition's `test/helpers/programLine.ts` exports the same names, bound to Effect 4.
 */
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"

export * as FetchHttpClient from "@effect/platform/FetchHttpClient"

/** The stream of a subscription ref's values: the current one, then each change. */
export const changesOf = <A>(ref: SubscriptionRef.SubscriptionRef<A>): Stream.Stream<A> => ref.changes

/** One pull of `Stream.toPull`: the chunk it took; its failure is the stream's (`undefined` once the stream has ended). */
export const pullOnce = <A, E, R>(pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>, R>): Effect.Effect<ReadonlyArray<A>, E | undefined, R> =>
  Effect.map(Effect.mapError(pull, Option.getOrUndefined), Chunk.toReadonlyArray)

/** A schedule of `times` retries, `spacingMs` apart (none when `times` is 0). */
export const spacedRetries = (spacingMs: number, times: number) =>
  times === 0
    ? Schedule.stop
    : Schedule.spaced(Duration.millis(spacingMs)).pipe(Schedule.intersect(Schedule.recurs(times)))
