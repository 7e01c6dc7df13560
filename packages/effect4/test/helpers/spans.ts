/**
 * A tracer that keeps every span it makes (Effect's own spans, recorded), for the span tests.
 */
import * as Tracer from "effect/Tracer"

/** A span as recorded. */
export type Span = Tracer.NativeSpan

/** A tracer whose spans are Effect's native ones, each kept in `spans`. */
export const spying = (spans: Array<Span>): Tracer.Tracer =>
  Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
