/**
 * The runner protocol's transport with membership (`effect-agent-session-shell`'s
 * `ClusterHandshake`, through `binding/internal/handshake.ts`) and, optionally, TLS: the
 * server side as a `SocketServer` (the shape of `NodeSocketServer.make`) and the dialing side as
 * `Runners.RpcClientProtocol` (the shape of `NodeClusterSocket.layerClientProtocol`).
 *
 * Where: at the raw `net.Socket` / `tls.TLSSocket`, before it is wrapped as an Effect `Socket`.
 * `@effect/cluster` reads a connection as soon as its handler has it, so the handshake runs
 * first, on the bare stream, bounded in time (`handshakeTimeout`) and in bytes (the machine's
 * fixed lengths): a connection that fails it is destroyed without one byte reaching the RPC
 * server, and only a member's connection is handed over, with any bytes read past the handshake
 * put back (`unshift`). At most {@link MAX_PENDING} handshakes wait at once; more are refused at
 * once, so a flood of idle connections holds a bounded amount of memory.
 *
 * What is plain Node (running the handshake over the stream, the TCP or TLS server and dialing
 * socket, the bound on waiting handshakes, the log lines) is the binding's
 * `internal/membershipStream.ts`, written once for both editions; what is here binds it to this
 * line's Effect, sockets and RPC client.
 */
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Socket from "@effect/platform/Socket"
import * as SocketServer from "@effect/platform/SocketServer"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import type * as Net from "node:net"
import type { Duplex } from "node:stream"
import * as Handshake from "../../binding/internal/handshake.js"
import type { Auth } from "../../binding/internal/membership.js"
import * as MembershipStream from "../../binding/internal/membershipStream.js"

export type { Auth } from "../../binding/internal/membership.js"

export { MAX_PENDING } from "../../binding/internal/membershipStream.js"

/** A failed handshake: `reason` is one of fixed words, never anything of a secret. */
export class HandshakeError extends Error {
  constructor(readonly reason: MembershipStream.FailureReason) {
    super(`cluster handshake failed: ${reason}`)
    this.name = "HandshakeError"
  }
}

const keys = (auth: Auth): ReadonlyArray<Uint8Array> =>
  auth.secrets.map((secret) => Buffer.from(Redacted.value(secret), "utf8"))

/**
 * Runs `machine` on `conn` until it is done (the bytes read past the handshake put back, the
 * stream resumed when its next reader attaches) or fails (the connection destroyed). Bounded by
 * `timeout`.
 */
export const handshake = (conn: Duplex, machine: Handshake.Machine, timeout: Duration.Duration): Effect.Effect<void, HandshakeError> =>
  Effect.async<void, HandshakeError>((resume) => {
    const cancel = MembershipStream.runHandshake(conn, machine, Duration.toMillis(timeout), "data", (failure) =>
      resume(failure === undefined ? Effect.void : Effect.fail(new HandshakeError(failure))))
    return Effect.sync(cancel)
  })

/**
 * A runner's server: `NodeSocketServer.make` with the handshake (when `auth.secrets` is not
 * empty) and TLS (when `auth.tls` is given) before a connection reaches the handler.
 */
export const makeServer = Effect.fnUntraced(function*(listen: Net.ListenOptions, auth: Auth) {
  const errorDeferred = yield* Deferred.make<never, Error>()
  const secrets = keys(auth)
  const pending: Array<Net.Socket> = []
  let onConnection = (socket: Net.Socket) => {
    pending.push(socket)
  }
  const gate = MembershipStream.makeGate()

  const server = MembershipStream.createServer(auth.tls, Duration.toMillis(auth.handshakeTimeout), (conn) => onConnection(conn))
  server.on("error", (cause) => Deferred.unsafeDone(errorDeferred, Exit.fail(cause)))
  yield* Effect.addFinalizer(() => Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
  }))

  yield* Effect.async<void>((resume) => {
    server.listen(listen, () => resume(Effect.void))
  }).pipe(
    Effect.raceFirst(Effect.mapError(Deferred.await(errorDeferred), (cause) => new SocketServer.SocketServerError({ reason: "Open", cause })))
  )

  const run = Effect.fnUntraced(function*<R, E, _>(handler: (socket: Socket.Socket) => Effect.Effect<_, E, R>) {
    const scope = yield* Scope.make()
    const fiberSet = yield* FiberSet.make().pipe(Scope.extend(scope))
    const runFork = yield* FiberSet.runtime(fiberSet)<R>()
    const serve = (conn: Net.Socket) =>
      NodeSocket.fromDuplex(
        Effect.acquireRelease(
          Effect.suspend((): Effect.Effect<Net.Socket, Socket.SocketError> =>
            conn.closed
              ? Effect.fail(new Socket.SocketCloseError({ reason: "Close", code: 1000 }))
              : Effect.succeed(conn)
          ),
          (conn) =>
            Effect.sync(() => {
              if (conn.closed === false) conn.destroySoon()
            })
        )
      ).pipe(
        Effect.flatMap(handler),
        Effect.provideService(NodeSocket.NetSocket, conn)
      )
    const onConnection_ = (conn: Net.Socket) => {
      conn.on("error", () => {})
      if (secrets.length === 0) {
        runFork(Effect.catchAllCause(serve(conn), () => Effect.void))
        return
      }
      if (!gate.enter(conn, (message) => runFork(Effect.logWarning(message)))) return
      const refusedMessage = MembershipStream.refusedMessage(conn)
      runFork(
        handshake(conn, Handshake.server(secrets), auth.handshakeTimeout).pipe(
          Effect.ensuring(Effect.sync(gate.leave)),
          Effect.matchCauseEffect({
            onFailure: (cause) =>
              Effect.logWarning(refusedMessage).pipe(
                Effect.annotateLogs("reason", Option.match(
                  Option.flatMap(Option.some(cause), (c) => Option.fromNullable(c._tag === "Fail" ? c.error.reason : undefined)),
                  { onNone: () => "interrupted", onSome: (reason) => reason }
                ))
              ),
            onSuccess: () => Effect.catchAllCause(serve(conn), () => Effect.void)
          })
        )
      )
    }
    return yield* Effect.async<never>(() => {
      const prev = onConnection
      onConnection = onConnection_
      pending.forEach(onConnection)
      pending.length = 0
      return Effect.suspend(() => {
        onConnection = prev
        return Scope.close(scope, Exit.void)
      })
    }).pipe(
      Effect.raceFirst(Effect.mapError(Deferred.await(errorDeferred), (cause) => new SocketServer.SocketServerError({ reason: "Unknown", cause })))
    )
  })

  const address = server.address()!
  return SocketServer.SocketServer.of({
    address: typeof address === "string"
      ? { _tag: "UnixAddress", path: address }
      : { _tag: "TcpAddress", hostname: address.address, port: address.port },
    run
  })
})

/** The runner's server on its listen address (`ShardingConfig`), as `NodeClusterSocket.layerSocketServer`. */
export const layerSocketServer = (auth: Auth): Layer.Layer<SocketServer.SocketServer, SocketServer.SocketServerError, ShardingConfig.ShardingConfig> =>
  Layer.scoped(
    SocketServer.SocketServer,
    Effect.gen(function*() {
      const config = yield* ShardingConfig.ShardingConfig
      const listenAddress = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
      if (listenAddress._tag === "None") {
        return yield* Effect.die("layerSocketServer: ShardingConfig.runnerListenAddress is None")
      }
      return yield* makeServer({ host: listenAddress.value.host, port: listenAddress.value.port }, auth)
    })
  )

/**
 * Connects to `host:port` (over TLS when `auth.tls` is given), then proves membership and checks
 * the runner's proof; the connection is destroyed when the scope closes.
 */
export const connect = (auth: Auth, host: string, port: number): Effect.Effect<Duplex, Socket.SocketError, Scope.Scope> => {
  const secrets = keys(auth)
  return Effect.gen(function*() {
    let conn: Net.Socket | undefined
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (conn !== undefined && conn.closed === false) conn.destroySoon()
      })
    )
    const opened = yield* Effect.async<Net.Socket, Socket.SocketError>((resume) => {
      const socket = MembershipStream.dial(auth.tls, host, port, (cause) =>
        resume(cause === undefined ? Effect.succeed(socket) : Effect.fail(new Socket.SocketGenericError({ reason: "Open", cause }))))
      conn = socket
    }).pipe(
      Effect.timeoutFail({
        duration: "1 second",
        onTimeout: () => new Socket.SocketGenericError({ reason: "Open", cause: new Error("Connection timed out") })
      })
    )
    if (secrets.length > 0) {
      yield* handshake(opened, Handshake.client(secrets), auth.handshakeTimeout).pipe(
        Effect.mapError((cause) => new Socket.SocketGenericError({ reason: "Open", cause }))
      )
    }
    return opened
  })
}

/** The dialing side, as `NodeClusterSocket.layerClientProtocol`. */
export const layerClientProtocol = (auth: Auth): Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =>
  Layer.effect(Runners.RpcClientProtocol)(
    Effect.gen(function*() {
      const serialization = yield* RpcSerialization.RpcSerialization
      return Effect.fnUntraced(function*(address) {
        const socket = yield* NodeSocket.fromDuplex(connect(auth, address.host, address.port), {
          openTimeout: Duration.sum(Duration.seconds(1), auth.handshakeTimeout)
        })
        return yield* RpcClient.makeProtocolSocket().pipe(
          Effect.provideService(Socket.Socket, socket),
          Effect.provideService(RpcSerialization.RpcSerialization, serialization)
        )
      }, Effect.orDie)
    })
  )
