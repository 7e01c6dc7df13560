/**
 * A real PostgreSQL server for tests and benchmarks, in Effect 3: `postgresServer.ts`'s server
 * (without Effect: the Effect 4 cluster's tests wrap the same in Effect 4), started in the scope and
 * stopped, its directory removed, when the scope closes.
 *
 * Written against Effect 3: the Effect 3 edition's and the command line's tests and benches use
 * it; the Effect 4 edition does not import it (its install holds Effect 4 only).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Process from "./postgresServer.js"

export { binDir } from "./postgresServer.js"

export interface Postgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** Stops the server (fast shutdown: every connection is closed) and starts it again, same port and data. */
  readonly restart: Effect.Effect<void, Error>
}

const toError = (error: unknown): Error => error instanceof Error ? error : new Error(String(error))

/** A free loopback port. */
export const freePort: Effect.Effect<number> = Effect.promise(Process.freePort)

/** Starts a PostgreSQL server in the scope. */
export const start: Effect.Effect<Postgres, Error, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.tryPromise({ try: Process.startServer, catch: toError }),
    (server) => Effect.promise(server.stop)
  ),
  (server) => ({
    url: server.url,
    port: server.port,
    restart: Effect.tryPromise({ try: server.restart, catch: toError })
  })
)

/** A server shared by the tests of a suite: {@link layer}. */
export class Server extends Context.Tag("test/Postgres/Server")<Server, Postgres>() {}

/** {@link start} as a layer. */
export const layer: Layer.Layer<Server, Error> = Layer.scoped(Server, start)
