/**
 * Deadlines: every time-out of a shell's connections (idle time-outs, connect time-outs, the grace
 * given to a closing socket) is an entry of one queue, and the shell sleeps until the earliest
 * (one timer for all connections, not one per connection). Entries are kept in a binary heap by
 * due time. A connection touched by a frame does not move its entry: when the entry comes due,
 * its check sees the later deadline and says when to look again, so a busy connection costs one
 * heap operation per idle period, not one per frame.
 *
 * The queue keeps no clock: the shell says what time it is ({@link DeadlineQueue.runDue}) and asks
 * when to wake next ({@link DeadlineQueue.nextDue}).
 *
 * @since 0.1.0
 */

/**
 * What an entry's check says when it is called at `now`: when to check again (a time in ms), or
 * `undefined` when the entry is done.
 *
 * @since 0.1.0
 * @category models
 */
export type Check = (now: number) => number | undefined

/**
 * A scheduled entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  /** Removes the entry; its check is never called again. */
  readonly cancel: () => void
}

/** An entry in the heap (and the handle its owner cancels it by: one object per entry). */
class Item implements Entry {
  constructor(public at: number, public check: Check | undefined, private readonly onCancel: () => void) {}
  cancel(): void {
    if (this.check === undefined) return
    this.check = undefined
    this.onCancel()
  }
}

/** A binary min-heap of items by `at`. */
class Heap {
  readonly items: Array<Item> = []
  push(item: Item): void {
    const items = this.items
    let i = items.push(item) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = items[parent]!
      if (p.at <= item.at) break
      items[i] = p
      i = parent
    }
    items[i] = item
  }
  pop(): Item | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    while (true) {
      const left = 2 * i + 1
      if (left >= items.length) break
      const right = left + 1
      const child = right < items.length && items[right]!.at < items[left]!.at ? right : left
      if (items[child]!.at >= last.at) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}

/**
 * The queue of deadlines.
 *
 * @example
 * ```ts
 * import { Deadlines } from "effect-agent-session-shell"
 *
 * const queue = new Deadlines.DeadlineQueue()
 * const fired: Array<number> = []
 * queue.schedule(100, (now) => {
 *   fired.push(now)
 *   return undefined
 * })
 * queue.nextDue() // 100: the shell sleeps until then
 * queue.runDue(100, (defect) => console.error(defect))
 * queue.nextDue() // undefined: nothing left, the shell's timer may stop
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class DeadlineQueue {
  private readonly heap = new Heap()
  private live = 0
  private readonly cancelled = (): void => {
    this.live -= 1
    if (this.live === 0) this.onEmpty()
  }

  /** `onEmpty`: called when a cancel leaves no live entry (the shell's timer may stop). */
  constructor(private readonly onEmpty: () => void = () => {}) {}

  /** Entries not cancelled nor done. */
  get size(): number {
    return this.live
  }

  /** Adds an entry: `check` is called once the time reaches `at` (ms), then whenever it asks. */
  schedule(at: number, check: Check): Entry {
    const item = new Item(at, check, this.cancelled)
    this.heap.push(item)
    this.live += 1
    return item
  }

  /**
   * Calls the checks of every entry due at `now`, earliest first. A check that asks for `now` or
   * earlier is called again 1 ms later (not in a loop). A check that throws ends its entry and
   * `onDefect` gets what it threw: one connection's bug stops no other connection's time-outs.
   */
  runDue(now: number, onDefect: (defect: unknown) => void): void {
    const heap = this.heap
    for (let item = heap.items[0]; item !== undefined && item.at <= now; item = heap.items[0]) {
      heap.pop()
      const check = item.check
      if (check === undefined) continue
      let next: number | undefined
      try {
        next = check(now)
      } catch (defect) {
        onDefect(defect)
        next = undefined
      }
      if (next === undefined) {
        if (item.check !== undefined) this.live -= 1
        item.check = undefined
        continue
      }
      item.at = Math.max(next, now + 1)
      heap.push(item)
    }
    // Cancelled entries at the top are dropped (others wait for their time).
    while (heap.items[0] !== undefined && heap.items[0].check === undefined) heap.pop()
  }

  /** When the earliest live entry is due; `undefined` (and the queue emptied) when none is left. */
  nextDue(): number | undefined {
    const next = this.heap.items[0]
    if (this.live === 0 || next === undefined) {
      this.heap.items.length = 0
      return undefined
    }
    return next.at
  }
}
