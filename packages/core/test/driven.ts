/**
 * A test's stand-in for a shell: a `Connection` whose every input is followed, as a shell does it,
 * by the actions it decided (polled until none is left, each handed to a recording port) and by its
 * next deadline put on a deadline queue of the test's (moved only when it changes). The tests
 * write what they expect of each action where it happens.
 */
import { Connection } from "../src/index.js"
import type { Deadlines } from "../src/shell/index.js"

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
  readonly schedule: (at: number, check: Deadlines.Check) => Deadlines.Entry
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
  let entry: Deadlines.Entry | undefined
  let armedAt: number | undefined
  const drain = (): void => {
    for (let action = connection.poll(); action !== undefined; action = connection.poll()) act(port, action)
  }
  const check: Deadlines.Check = (now) => {
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
