/**
 * The events between a connection's transport and its consumer: appended from the socket's
 * callback (through the core, whose `Flow` bounds them: reading pauses at `bufferSize`), taken
 * whole by the consumer's pull, then the end (`Cause.Done`) or the failure, after every event
 * appended before it.
 *
 * Not a `Queue`: a queue is made for many producers and consumers that wait on each other (three
 * sets of waiters, a dispatcher, its take's closures), which is heap per open connection; here one
 * producer never waits (the core bounds it) and the consumer takes everything there is. A take
 * that finds nothing waits on {@link EventBuffer.wait}: woken by the next event or the end, it
 * looks again (a wake-up that finds nothing waits again).
 */
import * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Scheduler from "effect/Scheduler"

/** What the consumer finds once the events are over: the end, or the failure. */
export type End<E> = { readonly _tag: "Done" } | { readonly _tag: "Failed"; readonly cause: Cause.Cause<E> }

const done: End<never> = { _tag: "Done" }

/** A wake-up: the waiter looks again. */
const woke = Effect.void

/** The buffer of one connection. */
export class EventBuffer<A, E> {
  /** The events appended and not yet taken, oldest first (made on the first). */
  private items: Array<A> | undefined = undefined
  /** How the events ended, once they did. */
  private ended: End<E> | undefined = undefined
  /** The consumer waiting (and any other, should the same events be pulled concurrently). */
  private waiter: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  private others: Array<(effect: Effect.Effect<void>) => void> | undefined = undefined
  /** The waiting fiber's dispatcher: waiters are woken on it, after the producer's callback. */
  private dispatcher: Scheduler.SchedulerDispatcher | undefined = undefined
  private waking = false
  /** What an interrupted wait leaves: the others are woken (made on the first wait). */
  private cancelled: Effect.Effect<void> | undefined = undefined

  /** Events waiting for the consumer. */
  get size(): number {
    return this.items === undefined ? 0 : this.items.length
  }

  /** Appends an event (none after the end). */
  offer(item: A): void {
    if (this.ended !== undefined) return
    if (this.items === undefined) this.items = [item]
    else this.items.push(item)
    this.wake()
  }

  /** The events end, once what was appended is taken. */
  end(): void {
    if (this.ended !== undefined) return
    this.ended = done
    this.wake()
  }

  /** The events fail with `cause`, once what was appended is taken. */
  fail(cause: Cause.Cause<E>): void {
    if (this.ended !== undefined) return
    this.ended = { _tag: "Failed", cause }
    this.wake()
  }

  /** Every event waiting, oldest first, or none. */
  takeAll(): Arr.NonEmptyReadonlyArray<A> | undefined {
    const items = this.items
    if (items === undefined || !Arr.isArrayNonEmpty(items)) return undefined
    this.items = undefined
    return items
  }

  /** How the events ended, once every event appended was taken; `undefined` until then. */
  get finished(): End<E> | undefined {
    return this.size === 0 ? this.ended : undefined
  }

  /**
   * Waits until an event or the end is there (at once when one is); the caller looks again. An
   * interrupted wait wakes the other waiters, so that none waits on a wake-up it took.
   */
  get wait(): Effect.Effect<void> {
    return Effect.withFiber((fiber) =>
      Effect.callback<void>((resume) => {
        if (this.size > 0 || this.ended !== undefined) return resume(woke)
        if (this.waiter === undefined) this.waiter = resume
        else (this.others ??= []).push(resume)
        this.dispatcher = fiber.currentDispatcher
        return this.onInterrupt()
      })
    )
  }

  private onInterrupt(): Effect.Effect<void> {
    return this.cancelled ??= Effect.sync(() => this.wake())
  }

  /**
   * Wakes the waiters on their dispatcher, once the producer's callback is over (the events of one
   * read are taken as one chunk, and the consumer never runs inside the producer's callback).
   */
  private wake(): void {
    if (this.waiter === undefined || this.waking) return
    this.waking = true
    this.dispatcher!.scheduleTask(() => this.release(), 0)
  }

  private release(): void {
    const waiter = this.waiter
    const others = this.others
    this.waking = false
    this.waiter = undefined
    this.others = undefined
    this.dispatcher = undefined
    waiter?.(woke)
    if (others !== undefined) for (const other of others) other(woke)
  }
}
