/**
 * The contract of the service's HTTP API (each edition's `ServiceApi`) as both editions build
 * it: once per dialect value, each build with an authentication middleware of its own key.
 *
 * @since 0.1.0
 */
import type { Dialect } from "effect-agent-session-core"

/**
 * `make`, called once per dialect value: later calls with the same value return the first
 * result (an object, so that none is taken for a value not built yet). Held weakly, so a dialect made per call (`Dialect.make` in a loop) is not kept for the
 * process's life.
 *
 * @since 0.1.0
 * @category constructors
 */
export const perDialect = <D extends Dialect.Dialect, A extends object>(make: (dialect: D) => A): (dialect: D) => A => {
  const built = new WeakMap<D, A>()
  return (dialect) => {
    const found = built.get(dialect)
    if (found !== undefined) return found
    const made = make(dialect)
    built.set(dialect, made)
    return made
  }
}

let authentications = 0

/**
 * The key of the authentication middleware of one contract built for a dialect: unique to this
 * build (two contracts of dialects of the same name get two keys), and naming the dialect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const authenticationKey = (dialectName: string): string => {
  authentications += 1
  return `effect-agent-session/ServiceApi/Authentication/${dialectName}/${authentications}`
}
