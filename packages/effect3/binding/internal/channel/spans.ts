/**
 * The engine's spans (`EventStream.connection`, `EventStream.attempt`), made and ended by hand:
 * a wrapper (`Effect.withSpan`) would stay on the connection fiber's stack for as long as the
 * connection is open, which costs heap per open connection (the repository's
 * src/internal/README.md, "One connection").
 *
 * None is made when the tracer is Effect's built-in one (no tracer layer given): its spans reach
 * no exporter, and a span held for the connection's life is heap for nothing. Any tracer a user
 * provides gets them.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Tracer from "effect/Tracer"
import { builtInTracer, currentTimeNanos, makeSpanNoStack } from "../../../src/internal/line.js"

/** A span under the current one, or none under Effect's built-in tracer. */
export const make = (
  name: string,
  attributes: Record<string, unknown>
): Effect.Effect<Tracer.Span | undefined> =>
  Effect.flatMap(
    Effect.tracer,
    (tracer): Effect.Effect<Tracer.Span | undefined> =>
      tracer === builtInTracer ? Effect.succeed(undefined) : makeSpanNoStack(name, attributes)
  )

/** Ends a span made by {@link make}. */
export const end = (span: Tracer.Span | undefined, clock: Clock.Clock, exit: Exit.Exit<unknown, unknown>): void => {
  if (span !== undefined && span.status._tag !== "Ended") span.end(currentTimeNanos(clock), exit)
}
