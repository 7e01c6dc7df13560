/**
 * A test's stand-in for a shell: a `Connection` whose every input is followed, as a shell does it,
 * by the actions it decided (polled until none is left, each handed to a recording port) and by its
 * next deadline put on a deadline queue of the test's (moved only when it changes). The tests
 * write what they expect of each action where it happens.
 */
import { Connection } from "../src/index.js"

/** What a deadline's check says when called at `now`: when to check again, or `undefined` when done. */
export type Check = (now: number) => number | undefined

/** A scheduled deadline, which its owner may cancel. */
export interface Entry {
  readonly cancel: () => void
}

/**
 * The test's deadline queue, as a shell keeps one (the editions' is the shell's `Deadlines`): each
 * entry's check is called once the time given to `runDue` reaches it, earliest first, and again when
 * it asks (1 ms later at the earliest); a cancelled entry is never called again.
 */
export class DeadlineQueue {
  private readonly entries: Array<{ at: number; check: Check | undefined }> = []

  /** Entries not cancelled nor done. */
  get size(): number {
    return this.entries.filter((entry) => entry.check !== undefined).length
  }

  schedule(at: number, check: Check): Entry {
    const entry: { at: number; check: Check | undefined } = { at, check }
    this.entries.push(entry)
    return { cancel: () => (entry.check = undefined) }
  }

  /** Calls the checks due at `now`, earliest first; a check that throws ends its entry and goes to `onDefect`. */
  runDue(now: number, onDefect: (defect: unknown) => void): void {
    for (;;) {
      let due: { at: number; check: Check | undefined } | undefined
      for (const entry of this.entries) {
        if (entry.check !== undefined && entry.at <= now && (due === undefined || entry.at < due.at)) due = entry
      }
      if (due === undefined || due.check === undefined) break
      let next: number | undefined
      try {
        next = due.check(now)
      } catch (defect) {
        onDefect(defect)
        next = undefined
      }
      if (next === undefined) due.check = undefined
      else due.at = Math.max(next, now + 1)
    }
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i]?.check === undefined) this.entries.splice(i, 1)
  }

  /** When the earliest live entry is due; `undefined` when none is left. */
  nextDue(): number | undefined {
    const live = this.entries.filter((entry) => entry.check !== undefined).map((entry) => entry.at)
    return live.length === 0 ? undefined : Math.min(...live)
  }
}

/** What a test records of each action, and where it puts the connection's deadline. */
export interface TestPort<E, F> {
  readonly deliver: (event: E) => void
  readonly pause: () => void
  readonly resume: () => void
  readonly abort: () => void
  readonly write: () => void
  readonly skipped: (error: F, count: number) => void
  readonly forgot: (count: number, total: number) => void
  readonly wake: () => void
  readonly schedule: (at: number, check: Check) => Entry
}

/** A port that records nothing (and whose deadlines never come due). */
export const quietPort = <E, F>(): TestPort<E, F> => ({
  deliver: () => {},
  pause: () => {},
  resume: () => {},
  abort: () => {},
  write: () => {},
  skipped: () => {},
  forgot: () => {},
  wake: () => {},
  schedule: () => ({ cancel: () => {} })
})

const act = <E, F>(port: TestPort<E, F>, action: Connection.Action<E, F>): void => {
  switch (action._tag) {
    case "Deliver":
      return port.deliver(action.event)
    case "Pause":
      return port.pause()
    case "Resume":
      return port.resume()
    case "Abort":
      return port.abort()
    case "Write":
      return port.write()
    case "Skipped":
      return port.skipped(action.error, action.count)
    case "Forgot":
      return port.forgot(action.count, action.total)
    case "Wake":
      return port.wake()
  }
}

/** A connection driven as a shell drives it, its actions done on `port`. */
export const driven = <E, F, R = F>(
  options: Connection.Options,
  classifier: Connection.Classifier<E, F, R>,
  port: TestPort<E, F>
): Connection.Connection<E, F, R> => {
  const connection = new Connection.Connection<E, F, R>(options, classifier)
  let entry: Entry | undefined
  let armedAt: number | undefined
  const drain = (): void => {
    for (let action = connection.poll(); action !== undefined; action = connection.poll()) act(port, action)
  }
  const check: Check = (now) => {
    connection.timeout(now)
    drain()
    armedAt = connection.nextDeadline()
    if (armedAt === undefined) entry = undefined
    return armedAt
  }
  const after = (): void => {
    drain()
    const at = connection.nextDeadline()
    if (at === armedAt) return
    entry?.cancel()
    armedAt = at
    entry = at === undefined ? undefined : port.schedule(at, check)
  }
  return new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== "function" || property === "poll") return value
      return (...args: ReadonlyArray<unknown>): unknown => {
        const result: unknown = Reflect.apply(value, target, args)
        after()
        return result
      }
    }
  })
}
