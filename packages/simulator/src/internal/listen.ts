/**
 * A Node HTTP server of the simulator (or its replay) in the current scope: listening on its
 * address, and closed with the scope (its open connections too).
 */
import * as Crypto from "node:crypto"
import type * as Http from "node:http"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** A server made by `make`, closed (connections and all) when the scope closes. */
export const scoped = (make: () => Http.Server): Effect.Effect<Http.Server, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(make),
    (server) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        if (!server.listening) return resume(Effect.void)
        server.close(() => resume(Effect.void))
      })
  )

/** Listens on `port` (0: a free one) and `host`; the port it got. */
export const listen = (
  server: Http.Server,
  port: number,
  host: string
): Effect.Effect<number, HttpServerError.ServeError> =>
  Effect.async<number, HttpServerError.ServeError>((resume) => {
    const onError = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
    server.once("error", onError)
    server.listen({ port, host }, () => {
      server.off("error", onError)
      const address = server.address()
      resume(Effect.succeed(address !== null && typeof address === "object" ? address.port : port))
    })
  })

/**
 * The account key of a server on `host` when none is given: the well-known one on loopback, a
 * random one beyond (whoever reaches the port would otherwise be the account).
 */
export const accountKeyFor = (
  host: string,
  given: string | undefined,
  isLoopback: (host: string) => boolean,
  wellKnown: string
): string => given ?? (isLoopback(host) ? wellKnown : `sim_${Crypto.randomBytes(24).toString("base64url")}`)
