/**
 * The runner protocol's transport below Effect, written once for both cluster editions: plain
 * `node:net` / `node:tls` with callbacks, importing no Effect, so each edition's
 * `internal/authSocket.ts` wraps it unchanged (`Effect.async` / `Effect.callback`) and keeps only
 * what binds to its Effect line (its `Socket`, `SocketServer`, `NodeSocket`, the RPC client).
 *
 * What is here: running the membership handshake (`./handshake.ts`) on the bare stream, bounded in
 * time and in bytes (the machine's fixed lengths), with the bytes read past it put back
 * (`unshift`) and every listener it added removed; the TCP or TLS server and dialing socket; the
 * bound on handshakes waiting at once ({@link MAX_PENDING}); and the log lines about refused
 * connections (a remote address and fixed words, never anything of a secret).
 */
import * as Net from "node:net"
import type { Duplex } from "node:stream"
import * as Tls from "node:tls"
import type * as Handshake from "./handshake.js"

/** The most handshakes a runner lets wait at once. */
export const MAX_PENDING = 256

/** Why a handshake failed: one of fixed words, never anything of a secret. */
export type FailureReason = Handshake.FailureReason | "timed out" | "closed" | "too many pending"

/** The TLS settings the transport reads (the shape of the cluster's `TlsOptions`). */
export interface TlsSettings {
  readonly key?: string | Buffer | undefined
  readonly cert?: string | Buffer | undefined
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined
  readonly requireClientCertificate?: boolean | undefined
}

/**
 * How the stream's next reader reads it once the handshake is done: `"data"`, with `data` events
 * (the stream is resumed when that reader attaches its listener), or `"read"`, a paused stream
 * read with `read()` on `readable`.
 */
export type Reader = "data" | "read"

/**
 * Runs `machine` on `conn` until it is done (the bytes read past the handshake put back for the
 * next reader) or fails (the connection destroyed); `done` is called once, with the reason of a
 * failure. Bounded by `timeoutMillis`. Returns a cancel, which fails it as `"closed"`.
 */
export const runHandshake = (
  conn: Duplex,
  machine: Handshake.Machine,
  timeoutMillis: number,
  reader: Reader,
  done: (failure: FailureReason | undefined) => void
): () => void => {
  let over = false
  const finish = (failure: FailureReason | undefined) => {
    if (over) return
    over = true
    clearTimeout(timer)
    conn.off("data", onData)
    conn.off("readable", onReadable)
    conn.off("error", onClose)
    conn.off("close", onClose)
    conn.off("end", onClose)
    if (failure !== undefined) conn.destroy()
    done(failure)
  }
  /** Feeds `chunk` to the machine; true when the handshake is over. */
  const receive = (chunk: Uint8Array): boolean => {
    const step = machine.receive(chunk)
    if (step._tag === "Fail") {
      finish(step.reason)
      return true
    }
    if (step.send !== undefined) conn.write(step.send)
    if (step._tag === "Continue") return false
    if (reader === "data") conn.pause()
    if (step.leftover.length > 0) conn.unshift(step.leftover)
    if (reader === "data") {
      // `NodeSocket.fromDuplex` attaches its reader later; a paused stream does not resume by
      // itself when it does.
      const resumeOnReader = (event: string | symbol) => {
        if (event !== "data") return
        conn.off("newListener", resumeOnReader)
        process.nextTick(() => conn.resume())
      }
      conn.on("newListener", resumeOnReader)
    }
    finish(undefined)
    return true
  }
  const onData = (chunk: Uint8Array) => {
    if (!over) receive(chunk)
  }
  const onReadable = () => {
    while (!over) {
      const chunk: Buffer | string | null = conn.read()
      if (chunk === null) return
      if (receive(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk)) return
    }
  }
  const onClose = () => finish("closed")
  const timer = setTimeout(() => finish("timed out"), timeoutMillis)
  if (reader === "read") {
    conn.pause()
    conn.on("readable", onReadable)
  } else {
    conn.on("data", onData)
  }
  conn.on("error", onClose)
  conn.on("close", onClose)
  conn.on("end", onClose)
  if (machine.initial !== undefined) conn.write(machine.initial)
  if (reader === "read") onReadable()
  return () => finish("closed")
}

/**
 * A runner's server: `node:net`, or `node:tls` when `tls` is given (mutual unless
 * `requireClientCertificate` is false); `onConnection` gets each connection once it is open (for
 * TLS, once its TLS handshake is done: one that fails it is destroyed and never reaches it).
 */
export const createServer = (
  tls: TlsSettings | undefined,
  handshakeTimeoutMillis: number,
  onConnection: (conn: Net.Socket) => void
): Net.Server => {
  const server: Net.Server = tls === undefined
    ? Net.createServer()
    : Tls.createServer({
      key: tls.key,
      cert: tls.cert,
      ca: tls.ca as Tls.TlsOptions["ca"],
      requestCert: tls.requireClientCertificate ?? true,
      rejectUnauthorized: tls.requireClientCertificate ?? true,
      handshakeTimeout: handshakeTimeoutMillis
    })
  server.on(tls === undefined ? "connection" : "secureConnection", onConnection)
  server.on("tlsClientError", (_error, socket) => socket.destroy())
  return server
}

/**
 * Dials `host:port` (over TLS when `tls` is given, checking the runner's certificate); `opened` is
 * called once the connection is open (for TLS, secured), or with each error.
 */
export const dial = (
  tls: TlsSettings | undefined,
  host: string,
  port: number,
  opened: (error: Error | undefined) => void
): Net.Socket => {
  const socket = tls === undefined
    ? Net.createConnection({ host, port })
    : Tls.connect({
      host,
      port,
      key: tls.key,
      cert: tls.cert,
      ca: tls.ca as Tls.ConnectionOptions["ca"],
      // A runner's address is often an IP address: its certificate names it in subjectAltName.
      servername: Net.isIP(host) === 0 ? host : undefined
    })
  socket.once(tls === undefined ? "connect" : "secureConnect", () => opened(undefined))
  socket.on("error", (cause) => opened(cause))
  return socket
}

/** The bound on handshakes waiting at once, for one server. */
export interface Gate {
  /**
   * Takes a place for `conn`'s handshake, true; or, when {@link MAX_PENDING} wait already,
   * destroys `conn`, false, and calls `warn` with the line to log (at the first refusal and
   * every thousandth).
   */
  readonly enter: (conn: Duplex, warn: (message: string) => void) => boolean
  /** Gives back the place of a handshake that is over. */
  readonly leave: () => void
}

export const makeGate = (): Gate => {
  let waiting = 0
  let refused = 0
  return {
    enter: (conn, warn) => {
      if (waiting >= MAX_PENDING) {
        refused += 1
        conn.destroy()
        if (refused === 1 || refused % 1000 === 0) {
          warn(`cluster: refused ${refused} connection(s): ${MAX_PENDING} handshakes already waiting`)
        }
        return false
      }
      waiting += 1
      return true
    },
    leave: () => {
      waiting -= 1
    }
  }
}

/** The line to log when `conn` fails its handshake (annotated with the reason). */
export const refusedMessage = (conn: Net.Socket): string =>
  `cluster: a connection from ${conn.remoteAddress ?? "?"}:${conn.remotePort ?? "?"} was refused (not a member of the cluster)`
