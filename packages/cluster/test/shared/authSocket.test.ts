/**
 * The runner protocol's transport with the membership handshake (each cluster edition's
 * `src/internal/authSocket.ts`) over real loopback sockets, no database: a raw TCP outsider
 * (garbage, an RPC request with no secret, a partial handshake, a silent one, a flood) never
 * reaches the handler and is cut off; a dialer with a wrong secret is refused; a dialer refuses a
 * runner that does not prove the secret; a refusal is logged without the secret; the server
 * survives all of it and still serves members, bytes sent right after the handshake included.
 * Over TLS (certificates made with openssl), a certificate of another CA or none is refused.
 * Written once for both cluster editions (each runs it against its own transport); the socket
 * APIs that differ come from each edition's `test/helpers/line.ts`.
 */
import { assert, describe } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Handshake from "../../binding/internal/handshake.js"
import * as AuthSocket from "../../src/internal/authSocket.js"
import { callback, captureLogLines, echoEach, isSocketOpenError, scoped } from "../helpers/line.js"

const SECRET = "socket-secret-0123456789abcdef"
const auth = (...secrets: Array<string>): AuthSocket.Auth => ({
  secrets: secrets.map((secret) => Redacted.make(secret)),
  handshakeTimeout: Duration.millis(300)
})

/** A server with `auth` whose handler echoes every chunk back and counts the connections it got. */
const echoServer = (serverAuth: AuthSocket.Auth) =>
  Effect.gen(function*() {
    const server = yield* AuthSocket.makeServer({ host: "127.0.0.1", port: 0 }, serverAuth)
    const handled = { count: 0, bytes: 0 }
    yield* Effect.forkScoped(server.run((socket) =>
      Effect.suspend(() => {
        handled.count += 1
        return echoEach(socket, (bytes) => {
          handled.bytes += bytes
        })
      }).pipe(Effect.scoped)
    ))
    const address = server.address
    return { port: "port" in address ? address.port : 0, handled }
  })

/** A raw TCP client: sends `bytes`, then waits for the server to close; what it got and how long it took. */
const raw = (port: number, bytes: Uint8Array) =>
  callback<{ readonly received: number; readonly closedAfter: number }>((resume) => {
    const started = Date.now()
    let received = 0
    const conn = Net.createConnection({ host: "127.0.0.1", port }, () => conn.write(bytes))
    conn.on("data", (chunk) => {
      received += chunk.length
    })
    conn.on("error", () => {})
    conn.on("close", () => resume(Effect.succeed({ received, closedAfter: Date.now() - started })))
    return Effect.sync(() => conn.destroy())
  })

/** A member's connection through `connect`: sends `text`, reads it back. */
const echo = (dialAuth: AuthSocket.Auth, port: number, text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const conn = yield* AuthSocket.connect(dialAuth, "127.0.0.1", port)
    return yield* callback<string>((resume) => {
      let got = ""
      conn.on("data", (chunk: Buffer) => {
        got += chunk.toString("utf8")
        if (got.length >= text.length) resume(Effect.succeed(got))
      })
      conn.write(text)
    })
  }))

describe("the runner transport with membership", () => {
  scoped("garbage, a partial handshake, silence and a flood are cut off without reaching the handler; members still get through", () =>
    Effect.gen(function*() {
      const { handled, port } = yield* echoServer(auth(SECRET))
      // Garbage: closed at once, nothing said.
      const garbage = yield* raw(port, Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
      assert.strictEqual(garbage.received, 0)
      // What a process with no secret sends first (an RPC request, msgpack): closed at once.
      const rpc = yield* raw(port, Uint8Array.of(0x00, 0x00, 0x00, 0x10, 0x82, 0xa4, 0x5f, 0x74, 0x61, 0x67))
      assert.strictEqual(rpc.received, 0)
      // A partial hello, then silence: closed after the handshake's time-out.
      const partial = yield* raw(port, Handshake.client([Buffer.from(SECRET)]).initial!.subarray(0, 10))
      assert.strictEqual(partial.received, 0)
      assert.isAtLeast(partial.closedAfter, 250)
      assert.isBelow(partial.closedAfter, 5_000)
      // A whole hello then silence: the challenge, then closed after the time-out.
      const hello = yield* raw(port, Handshake.client([Buffer.from(SECRET)]).initial!)
      assert.strictEqual(hello.received, Handshake.HELLO_BYTES)
      assert.isAtLeast(hello.closedAfter, 250)
      // A lot of bytes at once: closed, nothing answered, nothing read past the first wrong byte.
      const flood = yield* raw(port, new Uint8Array(1 << 20).fill(0x45))
      assert.strictEqual(flood.received, 0)
      assert.strictEqual(handled.count, 0)
      assert.strictEqual(handled.bytes, 0)
      // A member, with bytes sent right after the handshake: echoed whole.
      assert.strictEqual(yield* echo(auth(SECRET), port, "hello, runner"), "hello, runner")
      assert.strictEqual(handled.count, 1)
    }), 30_000)

  scoped("a dialer with a wrong secret is refused (typed, at open) and never reaches the handler; with [wrong, right] it gets through", () =>
    Effect.gen(function*() {
      const { handled, port } = yield* echoServer(auth(SECRET))
      const error = yield* Effect.flip(echo(auth("wrong-secret-0123456789abcdef"), port, "x"))
      assert.isTrue(isSocketOpenError(error), String(error))
      assert.notInclude(String(error), "wrong-secret")
      assert.strictEqual(handled.count, 0)
      assert.strictEqual(yield* echo(auth("wrong-secret-0123456789abcdef", SECRET), port, "ok"), "ok")
    }), 30_000)

  scoped("a dialer refuses a runner that does not prove the secret (it answers the proof with bytes of its own)", () =>
    Effect.gen(function*() {
      const received: Array<number> = []
      const impostor = Net.createServer((conn) => {
        conn.on("error", () => {})
        let got = 0
        conn.on("data", (chunk) => {
          got += chunk.length
          received.push(chunk.length)
          if (got === Handshake.HELLO_BYTES) conn.write(Handshake.client([Buffer.from("impostor-knows-nothing-000")]).initial!)
          else conn.write(new Uint8Array(Handshake.MAC_BYTES).fill(1))
        })
      })
      yield* Effect.acquireRelease(
        callback<void>((resume) => {
          impostor.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () => Effect.sync(() => impostor.close())
      )
      const port = (impostor.address() as Net.AddressInfo).port
      const error = yield* Effect.flip(echo(auth(SECRET), port, "secret data"))
      assert.isTrue(isSocketOpenError(error), String(error))
      // Nothing but the hello and the proof reached the impostor: not the data.
      assert.strictEqual(received.reduce((a, b) => a + b, 0), Handshake.HELLO_BYTES + 1 + Handshake.MAC_BYTES)
    }), 30_000)

  scoped("a refused connection is logged without the secret; the server is still up for a member", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const answer = yield* Effect.gen(function*() {
        const { port } = yield* echoServer(auth(SECRET))
        yield* raw(port, Buffer.from("garbage"))
        yield* Effect.flip(echo(auth("wrong-secret-0123456789abcdef"), port, "x"))
        return yield* echo(auth(SECRET), port, "still up")
      }).pipe(Effect.scoped, Effect.provide(captureLogLines((line) => logs.push(JSON.stringify(line)))))
      assert.strictEqual(answer, "still up")
      assert.isAtLeast(logs.filter((line) => line.includes("not a member")).length, 2, logs.join("\n"))
      for (const line of logs) {
        assert.notInclude(line, SECRET)
        assert.notInclude(line, "wrong-secret")
      }
    }), 30_000)
})

/** A CA, a certificate for 127.0.0.1 signed by it (runner and members alike) and one signed by another CA. */
const certificates = () => {
  const dir = mkdtempSync(join(tmpdir(), "cluster-tls-"))
  const ssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  for (const name of ["ca", "other-ca"]) {
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.crt`, "-days", "1", "-subj", `/CN=${name}`)
  }
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n")
  for (const [name, ca] of [["member", "ca"], ["stranger", "other-ca"]] as const) {
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
    ssl("x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", "-extfile", "san.ext")
  }
  const read = (file: string) => readFileSync(join(dir, file), "utf8")
  const made = {
    member: { key: read("member.key"), cert: read("member.crt"), ca: read("ca.crt") },
    stranger: { key: read("stranger.key"), cert: read("stranger.crt"), ca: read("ca.crt") }
  }
  // The keys are held in memory from here on: none is left on disk.
  rmSync(dir, { recursive: true, force: true })
  return made
}

describe("the runner transport over TLS", () => {
  scoped("mutual TLS with the secret inside: a member gets through; a certificate of another CA, or none, is refused before the handshake", () =>
    Effect.gen(function*() {
      const certs = certificates()
      const { handled, port } = yield* echoServer({ ...auth(SECRET), tls: certs.member })
      assert.strictEqual(yield* echo({ ...auth(SECRET), tls: certs.member }, port, "over tls"), "over tls")
      const stranger = yield* Effect.flip(echo({ ...auth(SECRET), tls: certs.stranger }, port, "x"))
      assert.isTrue(isSocketOpenError(stranger), String(stranger))
      const noCert = yield* Effect.flip(echo({ ...auth(SECRET), tls: { ca: certs.member.ca } }, port, "x"))
      assert.isTrue(isSocketOpenError(noCert), String(noCert))
      // Plain TCP to a TLS runner: nothing reaches the handler.
      yield* raw(port, Handshake.client([Buffer.from(SECRET)]).initial!)
      assert.strictEqual(handled.count, 1)
    }), 60_000)
})
