/**
 * The answer ledger of an event channel: which requests may be answered, and where each accepted
 * answer is on its way to the service. A pure data type: every transition returns a new `Ledger`
 * (the engine keeps one `let ledger` and swaps it), so the rules below are proven alone by
 * property tests (test/channel/ledger.test.ts) against a transcription of the engine they replace.
 *
 * A request's status, by its key (action session and raw resource type, U16):
 *
 * ```text
 *                                             ┌─────── requeue (a drop) ───────┐
 *                                             ▼                                │
 *   (none) ──received──► pending ──queue──► queued ──written "written"──► unconfirmed
 *                          ▲  ▲               │  │                             │
 *                          │  └── refused ────┘  │                             │ confirm
 *                          │                     └── written "confirmed" ──► sent ◄┘
 *                          │                                                  │
 *                          └─────── received (asked again) ───────────────────┘
 * ```
 *
 * - received: a request event (first time, or asked again after its answer went through); a
 *   `queued` or `unconfirmed` answer is kept (the request repeated while its answer waits).
 * - queue (`respond`): only a `pending` request, only while the outbox holds fewer than `limit`.
 * - written: the head was written; "confirmed" when the service acknowledged it (an SSE `POST`),
 *   "written" when handed to an open socket. A write to be retried changes nothing (the head
 *   stays `queued`); refused (not to be retried) drops the head, its request pending again.
 * - confirm: a later event other than a keep-alive on that connection, or a clean end.
 * - requeue: the connection dropped; the unconfirmed go back to the FRONT of the outbox, in
 *   their order. It may take the outbox past `limit`: a written answer is never dropped.
 *
 * `outbox` (queued, oldest first) and `unconfirmed` (written, in write order) hold each key at
 * most once, and `[...unconfirmed, ...outbox]` is in the order the answers were accepted. At the
 * end `unsent` lists what was not delivered (a clean end confirms the written first).
 *
 * Bounded (issue 20 item 3): a key longer than {@link MAX_KEY_LENGTH} characters is kept as a
 * fingerprint of that length at most, and the ledger remembers at most `2 * MAX_REQUESTS`
 * requests: when a request arrives past that, it forgets down to {@link MAX_REQUESTS}, the
 * settled ones (`sent`) first, then the oldest pending (`queued` and `unconfirmed` answers are on
 * their way and never forgotten). `forgotten` counts the pending ones forgotten, for a warning; an
 * answer to one is refused as `never-received`. So the memory of the ledger is bounded whatever
 * the service sends: about `2 * MAX_REQUESTS * MAX_KEY_LENGTH` characters of keys, plus the
 * outbox (`answerBufferSize` answers).
 *
 * Cost: nothing on the per-frame path. `empty` is one shared constant; `hasUnconfirmed` and
 * `head` read a field; `event` allocates only when a status changes. The statuses are an Effect
 * `HashMap` (persistent, O(log n) per change), not a `ReadonlyMap` copied on write: keys are never
 * forgotten while the channel lives, so a copy costs O(keys) per change; measured (Node 20, a
 * request's four changes) 1.3 µs both at 10 keys, 10 µs against 2.7 µs at 100, 100 µs against
 * 2.5 µs at 1,000. A whole answer (request, queue, write, confirm) costs 3 to 7 µs here against
 * under 1 µs for the engine's former mutable Map and arrays: paid once per answer, beside its
 * encoding (0.7 µs), its writer fiber and its socket write; a frame that is no request pays a
 * field read. The outbox and unconfirmed are plain arrays copied on write: short (the outbox
 * below `limit`), read whole at the end.
 */
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type { UnsentAnswer } from "../../EventStream.js"
import type * as Wire from "../../Wire.js"

/** Where a request's answer is: see the module's diagram. */
export type Status = "pending" | "queued" | "unconfirmed" | "sent"

/** An answer accepted for a request: its key, its frame (WebSocket) and its data (SSE POST). */
export interface QueuedAnswer {
  readonly key: string
  readonly frame: string
  readonly data: Wire.AnswerData
}

/** The ledger: the status of the requests remembered, and the answers on their way. */
export interface Ledger {
  readonly requests: HashMap.HashMap<string, Status>
  /** Accepted, not written yet; the head is written next. */
  readonly outbox: ReadonlyArray<QueuedAnswer>
  /** Written on the current connection, waiting for a later frame that shows they got through. */
  readonly unconfirmed: ReadonlyArray<QueuedAnswer>
  /** When each request became pending (a count, for forgetting the oldest first). */
  readonly since: HashMap.HashMap<string, number>
  /** The next `since`. */
  readonly clock: number
  /** Pending requests forgotten so far to keep the bound (an answer to one is `never-received`). */
  readonly forgotten: number
}

/**
 * The longest key kept as it is (characters): an action session id of 1 MiB (a frame's worth)
 * would otherwise be held for the connection's life. Longer keys are fingerprinted.
 */
export const MAX_KEY_LENGTH = 256

/** The requests remembered after forgetting (at most twice as many between two forgettings). */
export const MAX_REQUESTS = 1024

/** Why `queue` refused an answer (`RequestNotPending`'s reasons, and `AnswerBufferFull`). */
export type Refusal = "never-received" | "already-answered" | "full"

/**
 * The key a request is answered by: its action session and raw resource type (U16). At most
 * {@link MAX_KEY_LENGTH} characters: a longer one is its first 128 characters, two 32-bit FNV-1a
 * variants of the whole and its length, marked by a leading U+0001 (so it never equals a key kept
 * whole).
 */
export const requestKey = (actionSessionId: string, resourceType: string): string => {
  const key = `${actionSessionId}\u0000${resourceType}`
  return key.length <= MAX_KEY_LENGTH ? key : fingerprint(key)
}

const fingerprint = (text: string): string => {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  return `\u0001${text.slice(0, 128)}\u0001${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}.${text.length}`
}

/** The action session and resource type of a key kept whole (not of a fingerprint). */
export const keyParts = (key: string): UnsentAnswer => {
  const cut = key.indexOf("\u0000")
  return { actionSessionId: key.slice(0, cut), resourceType: key.slice(cut + 1) }
}

const none: ReadonlyArray<QueuedAnswer> = []

/** No request seen, no answer: one shared constant. */
export const empty: Ledger = {
  requests: HashMap.empty(),
  outbox: none,
  unconfirmed: none,
  since: HashMap.empty(),
  clock: 0,
  forgotten: 0
}

/** The ledger with its statuses, outbox and unconfirmed answers changed (the rest kept). */
const make = (
  ledger: Ledger,
  requests: HashMap.HashMap<string, Status>,
  outbox: ReadonlyArray<QueuedAnswer>,
  unconfirmed: ReadonlyArray<QueuedAnswer>
): Ledger => ({ ...ledger, requests, outbox, unconfirmed })

/** Requests received on an earlier connection (another process's), still unanswered: pending. */
export const fromPending = (keys: Iterable<string>): Ledger => {
  let ledger = empty
  for (const key of keys) ledger = received(ledger, key)
  return ledger
}

/**
 * Forgets down to {@link MAX_REQUESTS} requests once more than twice as many are remembered:
 * the settled first, then the oldest pending; never one whose answer is on its way. Amortized
 * O(log n) per request (one sort per `MAX_REQUESTS` arrivals).
 */
const prune = (ledger: Ledger): Ledger => {
  const size = HashMap.size(ledger.requests)
  if (size <= 2 * MAX_REQUESTS) return ledger
  const candidates: Array<readonly [string, number]> = []
  for (const [key, status] of ledger.requests) {
    if (status === "sent") candidates.push([key, -1])
    else if (status === "pending") candidates.push([key, Option.getOrElse(HashMap.get(ledger.since, key), () => 0)])
  }
  candidates.sort((x, y) => x[1] - y[1])
  let requests = ledger.requests
  let since = ledger.since
  let forgotten = ledger.forgotten
  for (let i = 0; i < candidates.length && HashMap.size(requests) > MAX_REQUESTS; i++) {
    const [key, at] = candidates[i]!
    requests = HashMap.remove(requests, key)
    since = HashMap.remove(since, key)
    if (at >= 0) forgotten += 1
  }
  return { ...ledger, requests, since, forgotten }
}

/** The status of a request, `undefined` if it was never received. */
export const status = (ledger: Ledger, key: string): Status | undefined =>
  HashMap.size(ledger.requests) === 0 ? undefined : Option.getOrUndefined(HashMap.get(ledger.requests, key))

/** Its answer went through (`sent`): the request asked again is new (a replay that is delivered). */
export const isAnswered = (ledger: Ledger, key: string): boolean => status(ledger, key) === "sent"

/** Answers written and not confirmed yet: a field read. */
export const hasUnconfirmed = (ledger: Ledger): boolean => ledger.unconfirmed.length > 0

/** The answer to write next, if any: a field read. */
export const head = (ledger: Ledger): QueuedAnswer | undefined => ledger.outbox[0]

/** The request arrived (again): pending, unless its answer waits to be written or confirmed. */
export const received = (ledger: Ledger, key: string): Ledger => {
  const was = status(ledger, key)
  if (was === "pending" || was === "queued" || was === "unconfirmed") return ledger
  return prune({
    ...ledger,
    requests: HashMap.set(ledger.requests, key, "pending"),
    since: HashMap.set(ledger.since, key, ledger.clock),
    clock: ledger.clock + 1
  })
}

/** The written answers got through (a later event on their connection, or a clean end): sent. */
export const confirm = (ledger: Ledger): Ledger => {
  if (ledger.unconfirmed.length === 0) return ledger
  let requests = ledger.requests
  for (const answer of ledger.unconfirmed) requests = HashMap.set(requests, answer.key, "sent")
  return make(ledger, requests, ledger.outbox, none)
}

/**
 * An event other than a keep-alive (`Heartbeat`, `Connected`) arrived; `request` is its key when it
 * is a request. Answers written before it are confirmed first, then the request is `received`.
 */
export const event = (ledger: Ledger, request?: string): Ledger => {
  const confirmed = ledger.unconfirmed.length === 0 ? ledger : confirm(ledger)
  return request === undefined ? confirmed : received(confirmed, request)
}

/** Accepts an answer at the back of the outbox if its request is pending and the outbox has room. */
export const queue = (ledger: Ledger, answer: QueuedAnswer, limit: number): Either.Either<Ledger, Refusal> => {
  const was = status(ledger, answer.key)
  if (was === undefined) return Either.left("never-received")
  if (was !== "pending") return Either.left("already-answered")
  if (ledger.outbox.length >= limit) return Either.left("full")
  return Either.right(
    make(ledger, HashMap.set(ledger.requests, answer.key, "queued"), [...ledger.outbox, answer], ledger.unconfirmed)
  )
}

/**
 * The head was written: `"confirmed"` (the service acknowledged it: sent) or `"written"` (handed
 * to the open socket: unconfirmed until a later frame). An empty outbox is left as it is.
 */
export const written = (ledger: Ledger, how: "confirmed" | "written"): Ledger => {
  const answer = ledger.outbox[0]
  if (answer === undefined) return ledger
  const outbox = ledger.outbox.slice(1)
  return how === "confirmed"
    ? make(ledger, HashMap.set(ledger.requests, answer.key, "sent"), outbox, ledger.unconfirmed)
    : make(ledger, HashMap.set(ledger.requests, answer.key, "unconfirmed"), outbox, [...ledger.unconfirmed, answer])
}

/** The service refused the head, not to be retried: dropped, its request pending again. */
export const refused = (ledger: Ledger): Ledger => {
  const answer = ledger.outbox[0]
  if (answer === undefined) return ledger
  return make(ledger, HashMap.set(ledger.requests, answer.key, "pending"), ledger.outbox.slice(1), ledger.unconfirmed)
}

/**
 * The connection dropped: the unconfirmed answers may be lost, and are written again first
 * (queued, at the front of the outbox, in their order). How many: `ledger.unconfirmed.length` before.
 */
export const requeue = (ledger: Ledger): Ledger => {
  if (ledger.unconfirmed.length === 0) return ledger
  let requests = ledger.requests
  for (const answer of ledger.unconfirmed) requests = HashMap.set(requests, answer.key, "queued")
  return make(ledger, requests, [...ledger.unconfirmed, ...ledger.outbox], none)
}

/**
 * The channel closed for good: the answers not delivered, unconfirmed first, then the outbox. A
 * `clean` end (the close came after everything written, on the wire) confirms the written ones
 * first. The engine's ledger is `empty` afterwards.
 */
export const unsent = (ledger: Ledger, clean: boolean): ReadonlyArray<UnsentAnswer> => {
  const answers = clean ? ledger.outbox : [...ledger.unconfirmed, ...ledger.outbox]
  // From the answer itself: a long key is a fingerprint.
  return answers.map((answer) => ({
    actionSessionId: answer.data.action_session_id ?? keyParts(answer.key).actionSessionId,
    resourceType: answer.data.resource_type
  }))
}
