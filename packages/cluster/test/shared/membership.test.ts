/**
 * The membership handshake as a codec (shell's `ClusterHandshake`, bound to `node:crypto` by
 * cluster/binding/internal/handshake.ts: bytes in, bytes out) and the cluster secret's
 * configuration (NodeClusterSessions): both without a socket or a database. Written once for both
 * cluster editions (each runs it against its own `NodeClusterSessions`); the membership over real
 * sockets is `authSocket.test.ts` (the transport) and `auth.test.ts` (a runner, members and outsiders).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { NodeClusterSessions } from "../../src/index.js"
import * as Handshake from "../../binding/internal/handshake.js"
import { NodeAgentSessions, withEnv } from "../helpers/line.js"

const key = (text: string) => Buffer.from(text, "utf8")
const current = key("current-secret-0123456789")
const previous = key("previous-secret-0123456789")
const wrong = key("wrong-secret-000000000000")

/** Runs both machines against each other, every byte handed over in chunks of `chunk` bytes. */
const exchange = (client: Handshake.Machine, server: Handshake.Machine, chunk = Infinity) => {
  const deliver = (machine: Handshake.Machine, bytes: Uint8Array): Handshake.Step => {
    let step: Handshake.Step = { _tag: "Continue", send: undefined }
    const sends: Array<Uint8Array> = []
    for (let at = 0; at < bytes.length; at += Math.min(chunk, bytes.length)) {
      step = machine.receive(bytes.subarray(at, at + Math.min(chunk, bytes.length)))
      if (step._tag === "Fail") return step
      if (step.send !== undefined) sends.push(step.send)
    }
    const send = Buffer.concat(sends)
    return step._tag === "Done"
      ? { ...step, send: send.length > 0 ? send : undefined }
      : { _tag: "Continue", send: send.length > 0 ? send : undefined }
  }
  const challenge = deliver(server, client.initial!)
  if (challenge._tag === "Fail") return { server: challenge, client: undefined }
  const proof = deliver(client, challenge.send!)
  if (proof._tag === "Fail") return { server: challenge, client: proof }
  const answer = deliver(server, proof.send!)
  if (answer._tag === "Fail") return { server: answer, client: proof }
  return { server: answer, client: deliver(client, answer.send!) }
}

describe("the membership handshake (codec)", () => {
  it("members with one secret both end Done, with nothing left over; byte by byte too", () => {
    for (const chunk of [Infinity, 1, 7]) {
      const result = exchange(Handshake.client([current]), Handshake.server([current]), chunk)
      assert.strictEqual(result.server._tag, "Done", `chunk ${chunk}`)
      assert.strictEqual(result.client?._tag, "Done", `chunk ${chunk}`)
      if (result.server._tag === "Done") assert.strictEqual(result.server.leftover.length, 0)
    }
  })

  it("a wrong secret: the runner fails the client's proof and answers nothing", () => {
    const server = Handshake.server([current])
    const client = Handshake.client([wrong])
    const challenge = server.receive(client.initial!)
    const proof = client.receive(challenge._tag === "Continue" ? challenge.send! : new Uint8Array())
    assert.strictEqual(proof._tag, "Continue")
    const answer = server.receive(proof._tag === "Continue" ? proof.send! : new Uint8Array())
    assert.deepStrictEqual(answer, { _tag: "Fail", reason: "no secret matched" })
  })

  it("a proof with one bit changed is refused", () => {
    const server = Handshake.server([current])
    const client = Handshake.client([current])
    const challenge = server.receive(client.initial!)
    const proof = client.receive(challenge._tag === "Continue" ? challenge.send! : new Uint8Array())
    const tampered = Uint8Array.from(proof._tag === "Continue" ? proof.send! : [])
    tampered[5] = tampered[5]! ^ 1
    assert.deepStrictEqual(server.receive(tampered), { _tag: "Fail", reason: "no secret matched" })
  })

  it("a proof recorded from one exchange is refused in another (a fresh challenge)", () => {
    const first = Handshake.server([current])
    const client = Handshake.client([current])
    const challenge = first.receive(client.initial!)
    const proof = client.receive(challenge._tag === "Continue" ? challenge.send! : new Uint8Array())
    const second = Handshake.server([current])
    second.receive(client.initial!)
    assert.deepStrictEqual(second.receive(proof._tag === "Continue" ? proof.send! : new Uint8Array()), {
      _tag: "Fail",
      reason: "no secret matched"
    })
  })

  it("the client refuses a runner that does not know the secret (mutual)", () => {
    // A runner with another secret: its answer is a MAC under that secret.
    const impostor = Handshake.server([wrong, current])
    const client = Handshake.client([current])
    const challenge = impostor.receive(client.initial!)
    const proof = client.receive(challenge._tag === "Continue" ? challenge.send! : new Uint8Array())
    const answer = impostor.receive(proof._tag === "Continue" ? proof.send! : new Uint8Array())
    // It accepted the client (it holds `current` too) and answered under `current`:
    assert.strictEqual(answer._tag, "Done")
    // An impostor that knows nothing sends 32 bytes of its own choice.
    const fake = Handshake.client([current])
    const fakeChallenge = Handshake.server([wrong]).receive(fake.initial!)
    const step = fake.receive(fakeChallenge._tag === "Continue" ? fakeChallenge.send! : new Uint8Array())
    assert.strictEqual(step._tag, "Continue")
    assert.deepStrictEqual(fake.receive(new Uint8Array(Handshake.MAC_BYTES).fill(7)), { _tag: "Fail", reason: "no secret matched" })
  })

  it("a rotation: runner [new, old] and client [old] talk; client [new, old] and runner [old] talk; runner [new] and client [old] do not", () => {
    assert.strictEqual(exchange(Handshake.client([previous]), Handshake.server([current, previous])).client?._tag, "Done")
    assert.strictEqual(exchange(Handshake.client([current, previous]), Handshake.server([previous])).client?._tag, "Done")
    const dropped = exchange(Handshake.client([previous]), Handshake.server([current]))
    assert.deepStrictEqual(dropped.server, { _tag: "Fail", reason: "no secret matched" })
  })

  it("garbage, another version and a bad proof count fail at once; a partial hello waits, saying nothing", () => {
    assert.deepStrictEqual(Handshake.server([current]).receive(Buffer.from("GET / HTTP/1.1\r\n")), { _tag: "Fail", reason: "bad magic" })
    // msgpack of an RPC request (what a client with no secret sends first) is not the magic.
    assert.deepStrictEqual(Handshake.server([current]).receive(Uint8Array.of(0x82, 0xa4)), { _tag: "Fail", reason: "bad magic" })
    const other = Uint8Array.from(Handshake.client([current]).initial!)
    other[4] = 2
    assert.deepStrictEqual(Handshake.server([current]).receive(other), { _tag: "Fail", reason: "unsupported version" })
    assert.deepStrictEqual(Handshake.server([current]).receive(Uint8Array.of(0x45, 0x41)), { _tag: "Continue", send: undefined })
    for (const count of [0, Handshake.MAX_SECRETS + 1]) {
      const server = Handshake.server([current])
      server.receive(Handshake.client([current]).initial!)
      assert.deepStrictEqual(server.receive(Uint8Array.of(count)), { _tag: "Fail", reason: "bad proof count" })
    }
  })

  it("bytes past a finished handshake are handed back, not read", () => {
    const server = Handshake.server([current])
    const client = Handshake.client([current])
    const challenge = server.receive(client.initial!)
    const proof = client.receive(challenge._tag === "Continue" ? challenge.send! : new Uint8Array())
    const after = server.receive(Buffer.concat([proof._tag === "Continue" ? proof.send! : new Uint8Array(), Buffer.from("rpc")]))
    assert.strictEqual(after._tag, "Done")
    if (after._tag === "Done") assert.strictEqual(Buffer.from(after.leftover).toString(), "rpc")
  })
})

const sdk = NodeAgentSessions.layer({ apiKey: "unused", baseUrl: "http://127.0.0.1:9", wsUrl: "ws://127.0.0.1:9" })
const buildRunner = (options: NodeClusterSessions.RunnerOptions, env: Record<string, string> = {}) =>
  Effect.scoped(Layer.build(NodeClusterSessions.layerRunner({ databaseUrl: "postgres://nobody@127.0.0.1:9/none", ...options }).pipe(Layer.provide(sdk)))).pipe(
    withEnv(env),
    Effect.flip
  )

describe("the cluster secret's configuration", () => {
  it.effect("a runner listening beyond loopback with no secret fails at start-up with ClusterSecretError, before any database", () =>
    Effect.gen(function*() {
      for (const options of [{ host: "0.0.0.0", port: 1 }, { host: "10.0.0.5", port: 1 }, { host: "127.0.0.1", listenHost: "0.0.0.0", port: 1 }, { host: "::", port: 1 }]) {
        const error = yield* buildRunner(options)
        assert.strictEqual(error._tag, "ClusterSecretError", JSON.stringify(options))
        if (error._tag === "ClusterSecretError") {
          assert.strictEqual(error.reason, "Missing")
          assert.include(error.message, "CLUSTER_SECRET")
        }
      }
    }))

  it.effect("a short secret fails (TooShort), and the message does not show it; from CLUSTER_SECRET too", () =>
    Effect.gen(function*() {
      const error = yield* buildRunner({ host: "0.0.0.0", port: 1, secret: Redacted.make("short-secret") })
      assert.strictEqual(error._tag, "ClusterSecretError")
      assert.notInclude(error.message, "short-secret")
      const fromEnv = yield* buildRunner({ host: "0.0.0.0", port: 1 }, { CLUSTER_SECRET: "env-secret" })
      assert.strictEqual(fromEnv._tag, "ClusterSecretError")
      assert.notInclude(fromEnv.message, "env-secret")
      const previousShort = yield* buildRunner({ host: "0.0.0.0", port: 1 }, {
        CLUSTER_SECRET: "a-long-enough-secret-123",
        CLUSTER_SECRETS_PREVIOUS: "a-long-enough-secret-456,tiny"
      })
      assert.strictEqual(previousShort._tag, "ClusterSecretError")
      assert.notInclude(previousShort.message, "tiny")
    }))

  it.effect("more than 8 secrets fail (TooMany) without showing one; previous secrets without a current one fail (Missing)", () =>
    Effect.gen(function*() {
      const secret = "a-long-enough-secret-123"
      const many = yield* buildRunner({ host: "127.0.0.1", port: 1, secret, previousSecrets: Array.from({ length: 8 }, (_, i) => `${secret}-${i}`) })
      assert.strictEqual(many._tag, "ClusterSecretError")
      if (many._tag === "ClusterSecretError") assert.strictEqual(many.reason, "TooMany")
      assert.notInclude(many.message, secret)
      const orphans = yield* buildRunner({ host: "127.0.0.1", port: 1, previousSecrets: [secret] })
      assert.strictEqual(orphans._tag, "ClusterSecretError")
      if (orphans._tag === "ClusterSecretError") assert.strictEqual(orphans.reason, "Missing")
      assert.notInclude(orphans.message, secret)
    }))
})

describe("a handshake side given no usable secrets", () => {
  it("fails as a handshake failure at its first input, never with an exception", () => {
    const nine = Array.from({ length: Handshake.MAX_SECRETS + 1 }, (_, i) => new TextEncoder().encode(`secret-number-${i}-long-enough`))
    for (const side of [Handshake.server([]), Handshake.server(nine), Handshake.client([]), Handshake.client(nine)]) {
      assert.isUndefined(side.initial)
      assert.deepStrictEqual(side.receive(new Uint8Array(8)), { _tag: "Fail", reason: "bad proof count" })
    }
  })
})
