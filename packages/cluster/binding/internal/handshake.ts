/**
 * The membership handshake (`effect-agent-session-shell`'s `ClusterHandshake`: its frames, proofs
 * and limits, written once below both cluster editions) bound to `node:crypto`, which the shell
 * does not import: what `./membershipStream.ts` runs over each edition's sockets. `random`
 * gives a side's nonce (tests pass a fixed one).
 */
import { ClusterHandshake } from "effect-agent-session-shell"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

export const { HELLO_BYTES, MAC_BYTES, MAGIC, MAX_SECRETS, NONCE_BYTES, VERSION } = ClusterHandshake
export type FailureReason = ClusterHandshake.FailureReason
export type Machine = ClusterHandshake.Machine
export type Step = ClusterHandshake.Step

/** `node:crypto`'s HMAC-SHA256, random bytes and constant-time comparison. */
export const nodeCrypto: ClusterHandshake.Crypto = {
  hmacSha256: (key, parts) => parts.reduce((hmac, part) => hmac.update(part), createHmac("sha256", key)).digest(),
  randomBytes,
  timingSafeEqual
}

/** The runner's side. */
export const server = (secrets: ReadonlyArray<Uint8Array>, random: (n: number) => Uint8Array = randomBytes): Machine =>
  ClusterHandshake.server(secrets, { ...nodeCrypto, randomBytes: random })

/** The side that dials (a runner calling another, or a client). */
export const client = (secrets: ReadonlyArray<Uint8Array>, random: (n: number) => Uint8Array = randomBytes): Machine =>
  ClusterHandshake.client(secrets, { ...nodeCrypto, randomBytes: random })
