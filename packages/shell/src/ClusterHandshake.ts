/**
 * The membership handshake of the cluster's runner protocol, without I/O (bytes in, bytes out,
 * one state machine per side), written once for both cluster editions: every connection to a
 * runner, from another runner or a client, proves that both ends know a cluster secret before one
 * message of the cluster's runner protocol is read. Each edition's `internal/authSocket.ts`
 * drives it over Node sockets, through the cluster binding's `internal/handshake.ts`, which gives
 * it `node:crypto`.
 *
 * Why the cryptography is passed in ({@link Crypto}) rather than imported: this package imports no
 * Node module (it compiles with no Node types, as the protocol core does; `FileSource` takes
 * `node:fs`'s functions the same way), and HMAC must be synchronous here (a state machine that
 * answers a chunk with bytes), which the Web Crypto API is not.
 *
 * Why a challenge-response over a shared secret (Erlang distribution's cookie) rather than mutual
 * TLS alone (Temporal, Akka): `@effect/cluster`'s socket transport has no hook for identities, a
 * runner's address is whatever it registered in PostgreSQL, and every process already shares a
 * configuration (the database URL); a secret of the same kind needs no certificate authority.
 * TLS (optionally mutual) is offered on top for networks that are not private: the handshake
 * proves membership but neither hides nor protects the messages that follow it.
 *
 * The exchange (all lengths fixed, `MAC = HMAC-SHA256`):
 * 1. client → runner: `MAGIC VERSION nc` (nc: 32 random bytes);
 * 2. runner → client: `MAGIC VERSION ns`;
 * 3. client → runner: `n mac_1 .. mac_n`, `mac_j = MAC(k_j, "client" label, nc, ns)` for each of
 *    the client's secrets (`1 <= n <= MAX_SECRETS`): the runner accepts when one of them is
 *    the MAC under one of its own secrets, compared in constant time;
 * 4. runner → client: `MAC(k, "server" label, nc, ns)` under the secret that matched: the client
 *    accepts when it is the MAC under one of its own secrets.
 * Failure closes the connection with nothing said. Role labels keep one side's MAC from being
 * replayed as the other's; both nonces keep a recorded exchange from being replayed. Every
 * process sends a MAC under each of its secrets, so a rotation needs no order: two processes
 * talk while their lists share a secret.
 *
 * @since 0.1.0
 */

/**
 * The synchronous cryptography the handshake needs: `node:crypto` gives all three (the cluster
 * binding's `internal/handshake.ts` binds them).
 *
 * @since 0.1.0
 * @category models
 */
export interface Crypto {
  /** HMAC-SHA256 of the parts, in order, under `key`. */
  readonly hmacSha256: (key: Uint8Array, parts: ReadonlyArray<Uint8Array>) => Uint8Array
  /** `n` cryptographically random bytes (a nonce). */
  readonly randomBytes: (n: number) => Uint8Array
  /** Whether two byte arrays of the same length are equal, in time independent of their contents. */
  readonly timingSafeEqual: (a: Uint8Array, b: Uint8Array) => boolean
}

/**
 * The first bytes of every hello, `EASC` (effect-agent-session cluster).
 *
 * @since 0.1.0
 * @category models
 */
export const MAGIC = Uint8Array.of(0x45, 0x41, 0x53, 0x43)
/**
 * The handshake's version, the byte after {@link MAGIC}.
 *
 * @since 0.1.0
 * @category models
 */
export const VERSION = 1
/**
 * The length of a nonce.
 *
 * @since 0.1.0
 * @category models
 */
export const NONCE_BYTES = 32
/**
 * The length of a MAC (HMAC-SHA256).
 *
 * @since 0.1.0
 * @category models
 */
export const MAC_BYTES = 32
/**
 * The most secrets a process may hold at once (the current one and previous ones).
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_SECRETS = 8
/**
 * The length of a hello: `MAGIC VERSION nonce`.
 *
 * @since 0.1.0
 * @category models
 */
export const HELLO_BYTES = MAGIC.length + 1 + NONCE_BYTES

const CLIENT_LABEL = new TextEncoder().encode("effect-agent-session/cluster/v1 client")
const SERVER_LABEL = new TextEncoder().encode("effect-agent-session/cluster/v1 server")

/**
 * Why a handshake failed: fixed words, never anything of a secret or of the bytes received.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureReason =
  | "bad magic"
  | "unsupported version"
  | "bad proof count"
  | "no secret matched"
  | "unexpected bytes"

/**
 * What a side does after reading a chunk.
 *
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly _tag: "Continue"; readonly send: Uint8Array | undefined }
  | { readonly _tag: "Done"; readonly send: Uint8Array | undefined; readonly leftover: Uint8Array }
  | { readonly _tag: "Fail"; readonly reason: FailureReason }

/**
 * One side of the handshake.
 *
 * @since 0.1.0
 * @category models
 */
export interface Machine {
  /** What to send first (the client's hello), if anything. */
  readonly initial: Uint8Array | undefined
  /** Reads a chunk. After `Done` or `Fail`, it must not be called again. */
  readonly receive: (chunk: Uint8Array) => Step
}

const mac = (crypto: Crypto, key: Uint8Array, label: Uint8Array, nc: Uint8Array, ns: Uint8Array): Uint8Array =>
  crypto.hmacSha256(key, [label, nc, ns])

const hello = (nonce: Uint8Array): Uint8Array => {
  const bytes = new Uint8Array(HELLO_BYTES)
  bytes.set(MAGIC, 0)
  bytes[MAGIC.length] = VERSION
  bytes.set(nonce, MAGIC.length + 1)
  return bytes
}

const readHello = (bytes: Uint8Array): { readonly nonce: Uint8Array } | FailureReason => {
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) return "bad magic"
  if (bytes[MAGIC.length] !== VERSION) return "unsupported version"
  return { nonce: bytes.slice(MAGIC.length + 1, HELLO_BYTES) }
}

/**
 * The peer's hello, read from `received` once it is whole: its nonce, or why it is refused;
 * `undefined` while it is incomplete. A wrong start fails at its first wrong byte, not after a
 * whole hello's worth.
 */
const takeHello = (received: ReturnType<typeof buffer>): Uint8Array | FailureReason | undefined => {
  if (received.length < HELLO_BYTES) {
    for (let i = 0; i < Math.min(received.length, MAGIC.length); i++) {
      if (received.peek(i) !== MAGIC[i]) return "bad magic"
    }
    return undefined
  }
  const read = readHello(received.take(HELLO_BYTES))
  return typeof read === "string" ? read : read.nonce
}

/** The first of `candidates` equal to one of `expected`, compared in constant time (all pairs). */
const firstMatch = (
  crypto: Crypto,
  expected: ReadonlyArray<Uint8Array>,
  candidates: ReadonlyArray<Uint8Array>
): number => {
  let found = -1
  for (let i = 0; i < expected.length; i++) {
    for (const candidate of candidates) {
      if (crypto.timingSafeEqual(expected[i]!, candidate) && found === -1) found = i
    }
  }
  return found
}

/** Bytes received so far, taken from the front as each message is complete. */
const buffer = () => {
  let bytes = new Uint8Array(0)
  return {
    push: (chunk: Uint8Array) => {
      const next = new Uint8Array(bytes.length + chunk.length)
      next.set(bytes, 0)
      next.set(chunk, bytes.length)
      bytes = next
    },
    get length() {
      return bytes.length
    },
    peek: (at: number) => bytes[at],
    take: (n: number): Uint8Array => {
      const taken = bytes.slice(0, n)
      bytes = bytes.slice(n)
      return taken
    },
    rest: (): Uint8Array => bytes
  }
}

/**
 * A side given no secret or more than {@link MAX_SECRETS} (the configuration refuses both with
 * `ClusterSecretError` first): it proves nothing and fails at its first input, as a handshake
 * failure, never an exception.
 */
const unusable = (secrets: ReadonlyArray<Uint8Array>): Machine | undefined =>
  secrets.length === 0 || secrets.length > MAX_SECRETS
    ? { initial: undefined, receive: () => ({ _tag: "Fail", reason: "bad proof count" }) }
    : undefined

/**
 * The runner's side; `crypto.randomBytes` gives its nonce.
 *
 * @since 0.1.0
 * @category constructors
 */
export const server = (secrets: ReadonlyArray<Uint8Array>, crypto: Crypto): Machine => {
  const refused = unusable(secrets)
  if (refused !== undefined) return refused
  const received = buffer()
  let state: "hello" | "proof" | "over" = "hello"
  let nc: Uint8Array | undefined
  let ns: Uint8Array | undefined
  const fail = (reason: FailureReason): Step => {
    state = "over"
    return { _tag: "Fail", reason }
  }
  return {
    initial: undefined,
    receive(chunk) {
      if (state === "over") return fail("unexpected bytes")
      received.push(chunk)
      let send: Uint8Array | undefined
      if (state === "hello") {
        const peer = takeHello(received)
        if (peer === undefined) return { _tag: "Continue", send: undefined }
        if (typeof peer === "string") return fail(peer)
        nc = peer
        ns = crypto.randomBytes(NONCE_BYTES)
        send = hello(ns)
        state = "proof"
      }
      if (received.length === 0) return { _tag: "Continue", send }
      const count = received.peek(0)!
      if (count < 1 || count > MAX_SECRETS) return fail("bad proof count")
      if (received.length < 1 + count * MAC_BYTES) return { _tag: "Continue", send }
      const proof = received.take(1 + count * MAC_BYTES)
      const offered = Array.from({ length: count }, (_, j) => proof.subarray(1 + j * MAC_BYTES, 1 + (j + 1) * MAC_BYTES))
      const expected = secrets.map((key) => mac(crypto, key, CLIENT_LABEL, nc!, ns!))
      const matched = firstMatch(crypto, expected, offered)
      if (matched === -1) return fail("no secret matched")
      state = "over"
      const answer = mac(crypto, secrets[matched]!, SERVER_LABEL, nc!, ns!)
      return { _tag: "Done", send: send === undefined ? answer : concat(send, answer), leftover: received.rest() }
    }
  }
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const bytes = new Uint8Array(a.length + b.length)
  bytes.set(a, 0)
  bytes.set(b, a.length)
  return bytes
}

/**
 * The side that dials (a runner calling another, or a client); `crypto.randomBytes` gives its
 * nonce.
 *
 * @since 0.1.0
 * @category constructors
 */
export const client = (secrets: ReadonlyArray<Uint8Array>, crypto: Crypto): Machine => {
  const refused = unusable(secrets)
  if (refused !== undefined) return refused
  const received = buffer()
  const nc = crypto.randomBytes(NONCE_BYTES)
  let state: "challenge" | "proof" | "over" = "challenge"
  let expected: ReadonlyArray<Uint8Array> = []
  const fail = (reason: FailureReason): Step => {
    state = "over"
    return { _tag: "Fail", reason }
  }
  return {
    initial: hello(nc),
    receive(chunk) {
      if (state === "over") return fail("unexpected bytes")
      received.push(chunk)
      let send: Uint8Array | undefined
      if (state === "challenge") {
        const peer = takeHello(received)
        if (peer === undefined) return { _tag: "Continue", send: undefined }
        if (typeof peer === "string") return fail(peer)
        const ns = peer
        const proof = new Uint8Array(1 + secrets.length * MAC_BYTES)
        proof[0] = secrets.length
        secrets.forEach((key, j) => proof.set(mac(crypto, key, CLIENT_LABEL, nc, ns), 1 + j * MAC_BYTES))
        expected = secrets.map((key) => mac(crypto, key, SERVER_LABEL, nc, ns))
        send = proof
        state = "proof"
      }
      if (received.length < MAC_BYTES) return { _tag: "Continue", send }
      const answer = received.take(MAC_BYTES)
      if (firstMatch(crypto, expected, [answer]) === -1) return fail("no secret matched")
      state = "over"
      return { _tag: "Done", send, leftover: received.rest() }
    }
  }
}
