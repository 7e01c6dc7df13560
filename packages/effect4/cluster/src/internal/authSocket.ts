/**
 * The runner protocol's transport with membership (`effect-agent-session-shell`'s
 * `ClusterHandshake`, through the binding's `internal/handshake.ts`) and, optionally, TLS, on
 * Effect 4: the server side as a `SocketServer` (the shape of `NodeSocketServer.make`) and the
 * dialing side as `Runners.RpcClientProtocol` (the shape of `NodeClusterSocket.layerClientProtocol`).
 *
 * Where: at the raw `net.Socket` / `tls.TLSSocket`, before it is wrapped as an Effect `Socket`.
 * The cluster reads a connection as soon as its handler has it, so the handshake runs first, on
 * the bare stream (paused, read with `read()` as Effect 4's `NodeSocket.fromDuplex` reads it),
 * bounded in time (`handshakeTimeout`) and in bytes (the machine's fixed lengths): a connection
 * that fails it is destroyed without one byte reaching the RPC server, and only a member's
 * connection is handed over, with any bytes read past the handshake put back (`unshift`). At most
 * {@link MAX_PENDING} handshakes wait at once; more are refused at once, so a flood of idle
 * connections holds a bounded amount of memory.
 *
 * What is plain Node (running the handshake over the stream, the TCP or TLS server and dialing
 * socket, the bound on waiting handshakes, the log lines) is the binding's
 * `internal/membershipStream.ts`, written once for both editions; what is here binds it to this
 * line's Effect, sockets and RPC client.
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as RpcClient from "effect/rpc/RpcClient"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Scope from "effect/Scope"
import * as Socket from "effect/socket/Socket"
import * as SocketServer from "effect/socket/SocketServer"
import type * as Net from "node:net"
import type { Duplex } from "node:stream"
import * as Handshake from "../../binding/internal/handshake.js"
import type { Auth } from "../../binding/internal/membership.js"
import * as MembershipStream from "../../binding/internal/membershipStream.js"

export type { Auth } from "../../binding/internal/membership.js"

export { MAX_PENDING } from "../../binding/internal/membershipStream.js"

/** A failed handshake: `reason` is one of fixed words, never anything of a secret. */
export class HandshakeError extends Data.TaggedError("HandshakeError")<{
  readonly reason: MembershipStream.FailureReason
}> {
  override get message() {
    return `cluster handshake failed: ${this.reason}`
  }
}

const keys = (auth: Auth): ReadonlyArray<Uint8Array> =>
  auth.secrets.map((secret) => Buffer.from(Redacted.value(secret), "utf8"))

const openError = (cause: unknown) =>
  new Socket.SocketError({ reason: new Socket.SocketOpenError({ kind: "Unknown", cause }) })

/**
 * Runs `machine` on `conn` (paused: read with `read()`, as Effect 4's `NodeSocket.fromDuplex`
 * reads it) until it is done (the bytes read past the handshake put back for the socket's
 * reader) or fails (the connection destroyed). Bounded by `timeout`.
 */
export const handshake = (conn: Duplex, machine: Handshake.Machine, timeout: Duration.Duration): Effect.Effect<void, HandshakeError> =>
  Effect.callback<void, HandshakeError>((resume) => {
    const cancel = MembershipStream.runHandshake(conn, machine, Duration.toMillis(timeout), "read", (failure) =>
      resume(failure === undefined ? Effect.void : Effect.fail(new HandshakeError({ reason: failure }))))
    return Effect.sync(cancel)
  })

const socketAddress = (address: string | Net.AddressInfo | null): SocketServer.SocketServer["Service"]["address"] =>
  address === null || typeof address === "string"
    ? NetAddress.unixPathAddress(address ?? "")
    : Result.getOrElse(NetAddress.inetAddressFromIpString(address.address, address.port), () => NetAddress.unixPathAddress(""))

/**
 * A runner's server: a `node:net` (or, with `auth.tls`, `node:tls`) server whose connections
 * prove membership (when `auth.secrets` is not empty) before they reach the handler.
 */
export const makeServer = Effect.fnUntraced(function*(listen: Net.ListenOptions, auth: Auth) {
  const errorDeferred = Deferred.makeUnsafe<never, Error>()
  const secrets = keys(auth)
  const pending: Array<Net.Socket> = []
  let onConnection = (conn: Net.Socket) => {
    pending.push(conn)
  }
  const gate = MembershipStream.makeGate()
  const server = MembershipStream.createServer(auth.tls, Duration.toMillis(auth.handshakeTimeout), (conn) => {
    conn.pause()
    onConnection(conn)
  })
  server.on("error", (cause) => Deferred.doneUnsafe(errorDeferred, Exit.fail(cause)))
  yield* Effect.addFinalizer(() =>
    Effect.callback<void>((resume) => {
      pending.forEach((conn) => conn.destroy())
      server.close(() => resume(Effect.void))
    })
  )
  yield* Effect.callback<void>((resume) => {
    server.listen(listen, () => resume(Effect.void))
  }).pipe(
    Effect.raceFirst(Effect.mapError(Deferred.await(errorDeferred), (cause) =>
      new SocketServer.SocketServerError({ reason: new SocketServer.SocketServerOpenError({ cause }) })))
  )

  const run = Effect.fnUntraced(function*<R, E, _>(handler: (socket: Socket.Socket) => Effect.Effect<_, E, R>) {
    const scope = yield* Scope.make()
    const services = Context.omit(Scope.Scope)(yield* Effect.context<R>()) as Context.Context<R>
    const trackFiber = Fiber.runIn(scope)
    const fork = <A, E2>(effect: Effect.Effect<A, E2, R>) =>
      trackFiber(Effect.runForkWith(services)(Effect.ignoreCause(effect)))
    const serve = (conn: Net.Socket) =>
      NodeSocket.fromDuplex(
        Effect.acquireRelease(
          Effect.suspend((): Effect.Effect<Net.Socket, Socket.SocketError> =>
            conn.closed
              ? Effect.fail(new Socket.SocketError({ reason: new Socket.SocketCloseError({ code: 1000 }) }))
              : Effect.succeed(conn)
          ),
          (conn) =>
            Effect.sync(() => {
              if (conn.closed === false) conn.destroySoon()
            })
        ),
        { tlsServer: auth.tls !== undefined }
      ).pipe(
        Effect.flatMap(handler),
        Effect.provideService(NodeSocket.NetSocket, conn)
      )
    const onConnection_ = (conn: Net.Socket) => {
      conn.on("error", () => {})
      if (secrets.length === 0) {
        fork(serve(conn))
        return
      }
      if (!gate.enter(conn, (message) => fork(Effect.logWarning(message)))) return
      const refusedMessage = MembershipStream.refusedMessage(conn)
      fork(
        handshake(conn, Handshake.server(secrets), auth.handshakeTimeout).pipe(
          Effect.ensuring(Effect.sync(gate.leave)),
          Effect.matchEffect({
            onFailure: (error) =>
              Effect.logWarning(refusedMessage).pipe(
                Effect.annotateLogs("reason", error.reason)
              ),
            onSuccess: () => serve(conn)
          })
        )
      )
    }
    const prev = onConnection
    onConnection = onConnection_
    pending.splice(0).forEach(onConnection_)
    return yield* Effect.callback<never>(() =>
      Effect.suspend(() => {
        onConnection = prev
        return Scope.close(scope, Exit.void)
      })
    )
  })

  return SocketServer.SocketServer.of({ address: socketAddress(server.address()), run })
})

/** The runner's server on its listen address (`ShardingConfig`), as `NodeClusterSocket.layerSocketServer`. */
export const layerSocketServer = (auth: Auth): Layer.Layer<SocketServer.SocketServer, SocketServer.SocketServerError, ShardingConfig.ShardingConfig> =>
  Layer.effect(
    SocketServer.SocketServer,
    Effect.gen(function*() {
      const config = yield* ShardingConfig.ShardingConfig
      const listenAddress = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
      if (Option.isNone(listenAddress)) {
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
    const opened = yield* Effect.callback<Net.Socket, Socket.SocketError>((resume) => {
      const socket = MembershipStream.dial(auth.tls, host, port, (cause) =>
        resume(cause === undefined ? Effect.succeed(socket) : Effect.fail(openError(cause))))
      conn = socket
    }).pipe(
      Effect.timeoutOrElse({ duration: "1 second", orElse: () => Effect.fail(openError(new Error("Connection timed out"))) })
    )
    if (secrets.length > 0) {
      yield* handshake(opened, Handshake.client(secrets), auth.handshakeTimeout).pipe(Effect.mapError(openError))
    }
    return opened
  })
}

/** The dialing side, as `NodeClusterSocket.layerClientProtocol`. */
export const layerClientProtocol = (auth: Auth): Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =>
  Layer.effect(Runners.RpcClientProtocol)(
    Effect.gen(function*() {
      const serialization = yield* RpcSerialization.RpcSerialization
      return {
        codecFor: serialization.codecFor,
        make: Effect.fnUntraced(function*(address) {
          const socket = yield* NodeSocket.fromDuplex(connect(auth, address.host, address.port), {
            openTimeout: Duration.sum(Duration.seconds(1), auth.handshakeTimeout)
          })
          return yield* RpcClient.makeProtocolSocket().pipe(
            Effect.provideService(Socket.Socket, socket),
            Effect.provideService(RpcSerialization.RpcSerialization, serialization)
          )
        }, Effect.orDie)
      }
    })
  )
