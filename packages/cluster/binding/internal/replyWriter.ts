/**
 * The writer's side of a reply mailbox (what the entity's `Events` offers to, outside any fiber):
 * each cluster edition's `line.ts` makes one over its line's mailbox (`Mailbox` on Effect 3, a
 * `Queue` on Effect 4).
 */
import type * as Exit from "effect/Exit"

/** Offers to and ends a reply mailbox, outside any fiber. */
export interface ReplyWriter<A, E> {
  readonly offerAll: (values: Iterable<A>) => void
  readonly offer: (value: A) => void
  /** Ends the mailbox: done when `exit` succeeds, failed with its cause otherwise. */
  readonly done: (exit: Exit.Exit<void, E>) => void
  /** How many elements wait to be taken. */
  readonly size: () => number
}
