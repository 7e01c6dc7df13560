/**
 * The events between a connection's transport and its consumer: appended from the socket's
 * callback (through the core, whose `Flow` bounds them: reading pauses at `bufferSize`), taken
 * whole by the consumer's pull, then the end or the failure, after every event appended before
 * it.
 *
 * Not a `Queue` (nor a `Mailbox`): a queue is made for many producers and consumers that wait on
 * each other (sets of waiters, a dispatcher, its take's closures), which is heap per open
 * connection; here one producer never waits (the core bounds it) and the consumer takes
 * everything there is. A pull that finds nothing waits ({@link EventBuffer.waitThen}): woken by
 * the next event or the end, it is resumed with the pull again (a wake-up that finds nothing waits
 * again). Every wake-up resumes every waiter, so a wait leaves nothing to undo when it is
 * interrupted (no finalizer on the waiting fiber's stack: an idle connection's wait costs no more
 * than its waiter).
 */
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Scheduler from "effect/Scheduler"
import {
  callbackOnScheduler,
  type Dispatcher,
  dispatcherOf,
  fiberDone,
  type RunningFiber
} from "../../../src/internal/line.js"

/** What the consumer finds once the events are over: the end, or the failure. */
export type End<E> = { readonly _tag: "Done" } | { readonly _tag: "Failed"; readonly cause: Cause.Cause<E> }

const done: End<never> = { _tag: "Done" }

/** A consumer waiting: its fiber is resumed with `next` (its pull, again). */
export interface Waiter {
  resume(effect: Effect.Effect<unknown, unknown>): void
  readonly next: Effect.Effect<unknown, unknown>
  /** The waiting fiber: once it is over (its wait interrupted), the waiter is dropped. */
  readonly fiber: RunningFiber<unknown, unknown> | undefined
}

/** Whether a waiter's fiber is over (a resume would be ignored). */
const isOver = (waiter: Waiter): boolean => waiter.fiber !== undefined && fiberDone(waiter.fiber)

/** The wait of {@link EventBuffer.waitThen}, on the waiting fiber's scheduler. */
const waitOn = <B, F>(buffer: EventBuffer<unknown, unknown>, next: Effect.Effect<B, F>): Effect.Effect<B, F> =>
  callbackOnScheduler<B, F>((resume, scheduler, fiber) => {
    if (!buffer.register({ resume, next, fiber }, scheduler)) resume(next)
  })

/** The buffer of one connection. */
export class EventBuffer<A, E> {
  /** The events appended and not yet taken, oldest first (made on the first, never empty). */
  private items: Arr.NonEmptyArray<A> | undefined = undefined
  /** How the events ended, once they did. */
  private ended: End<E> | undefined = undefined
  /** The consumer waiting (and any other, should the same events be pulled concurrently). */
  private waiter: Waiter | undefined = undefined
  private others: Array<Waiter> | undefined = undefined
  /** The waiters' dispatcher: they are woken on it, after the producer's callback. */
  private dispatcher: Dispatcher | undefined = undefined
  private waking = false

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
    this.items = undefined
    return items
  }

  /** How the events ended, once every event appended was taken; `undefined` until then. */
  get finished(): End<E> | undefined {
    return this.size === 0 ? this.ended : undefined
  }

  /**
   * Goes on with `next` (the caller's pull, which looks again) once an event or the end is there,
   * at once when one is. The waiting fiber holds no frame of its own: it is resumed with `next`. An
   * interrupted wait takes no wake-up from the others (each wake-up resumes them all); its waiter
   * is dropped by the next wake-up or wait.
   */
  waitThen<B, F>(next: Effect.Effect<B, F>): Effect.Effect<B, F> {
    return waitOn(this, next)
  }

  /**
   * Registers a waiter, unless an event or the end is there (false: it goes on at once). The
   * waiters whose fibers are over (their waits interrupted) are dropped first, so that waits
   * interrupted again and again do not pile up.
   */
  register(waiter: Waiter, scheduler: Scheduler.Scheduler): boolean {
    if (this.size > 0 || this.ended !== undefined) return false
    let others = this.others
    if (others !== undefined) {
      others = others.filter((other) => !isOver(other))
      this.others = others.length === 0 ? undefined : others
    }
    if (this.waiter !== undefined && isOver(this.waiter)) {
      this.waiter = this.others?.shift()
      if (this.others?.length === 0) this.others = undefined
    }
    if (this.waiter === undefined) this.waiter = waiter
    else (this.others ??= []).push(waiter)
    this.dispatcher = dispatcherOf(scheduler)
    return true
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
    waiter?.resume(waiter.next)
    if (others !== undefined) for (const other of others) other.resume(other.next)
  }
}
