/**
 * The answer ledger of a connection: which requests may be answered, and where each accepted
 * answer is on its way to the service. Owned by the `Connection`, which changes it only through the
 * transitions below; proven alone by property tests against a transcription of the rules.
 *
 * A request's status, by its key (action session and raw resource type):
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
 * Bounded: a key longer than {@link MAX_KEY_LENGTH} characters is kept as a fingerprint of that
 * length at most, every key as a copy of its own (never a view that holds the frame it was cut
 * from), and the ledger remembers at most `2 * MAX_REQUESTS` requests: when a request
 * arrives past that, it forgets down to {@link MAX_REQUESTS}, the settled ones (`sent`) first,
 * then the oldest pending (`queued` and `unconfirmed` answers are on their way and never
 * forgotten). `forgotten` counts the pending ones forgotten, for a warning; an answer to one is
 * refused as `never-received`. So the memory of the ledger is bounded whatever the service sends:
 * about `2 * MAX_REQUESTS * MAX_KEY_LENGTH` characters of keys, plus the outbox.
 *
 * Cost: nothing allocated until a request arrives; on the per-frame path a field read
 * (`hasUnconfirmed`); a status change is one map write; the outbox and the unconfirmed answers are
 * short arrays copied on write (read whole at the end); forgetting is one sort per
 * `MAX_REQUESTS` arrivals.
 *
 * @since 0.1.0
 */
import type { AnswerData } from "./Frame.js"

/**
 * Where a request's answer is: see the module's diagram.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "pending" | "queued" | "unconfirmed" | "sent"

/**
 * An answer accepted for a request: its key, its frame (WebSocket) and its data (SSE `POST`).
 *
 * @since 0.1.0
 * @category models
 */
export interface QueuedAnswer {
  readonly key: string
  readonly frame: string
  readonly data: AnswerData
}

/**
 * Why `queue` refused an answer: the request was never received, it is answered already, or the
 * outbox is full.
 *
 * @since 0.1.0
 * @category models
 */
export type Refusal = "never-received" | "already-answered" | "full"

/**
 * An answer accepted and not delivered when the connection closed for good.
 *
 * @since 0.1.0
 * @category models
 */
export interface UnsentAnswer {
  readonly resourceType: string
  readonly actionSessionId: string
}

/**
 * The longest key kept as it is (characters): an action session id of 1 MiB (a frame's worth)
 * would otherwise be held for the connection's life. Longer keys are fingerprinted.
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_KEY_LENGTH = 256

/**
 * The requests remembered after forgetting (at most twice as many between two forgettings).
 *
 * @since 0.1.0
 * @category models
 */
export const MAX_REQUESTS = 1024

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

/**
 * The key a request is answered by: its action session and raw resource type. At most
 * {@link MAX_KEY_LENGTH} characters: a longer one is its first 128 characters, two 32-bit FNV-1a
 * variants of the whole and its length, marked by a leading U+0001 (so it never equals a key kept
 * whole).
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestKey = (actionSessionId: string, resourceType: string): string => {
  const key = `${actionSessionId}\u0000${resourceType}`
  return key.length <= MAX_KEY_LENGTH ? key : fingerprint(key)
}

/**
 * A request key as text any store accepts, one to one: PostgreSQL `text` holds no U+0000 (the
 * key's own separator, and possible inside an id: JSON may carry `\u0000`) and, being UTF-8, no
 * lone surrogate (which a JSON string may also carry). Each U+0000 is written `U+0001 0`, each
 * U+0001 `U+0001 1`, each lone surrogate `U+0001 s` and its four hex digits; every other
 * character is kept. At most `6 * MAX_KEY_LENGTH` characters, all ASCII where it grows: at most
 * 1,536 bytes of UTF-8, under PostgreSQL's 2,704-byte limit on an index entry (the cluster's
 * answers are keyed by it).
 *
 * Chosen over another separator in {@link requestKey}: no separator is one the wire cannot hold,
 * so a key kept in memory stays as it is (U+0000, the cheapest to write) and only a stored one is
 * escaped, by this one function.
 *
 * @since 0.1.0
 * @category constructors
 */
export const storageKey = (key: string): string => {
  let out = ""
  let from = 0
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    let escaped: string | undefined
    if (c === 0) escaped = "\u00010"
    else if (c === 1) escaped = "\u00011"
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < key.length ? key.charCodeAt(i + 1) : 0
      if (next >= 0xdc00 && next <= 0xdfff) i += 1
      else escaped = `\u0001s${c.toString(16)}`
    } else if (c >= 0xdc00 && c <= 0xdfff) escaped = `\u0001s${c.toString(16)}`
    if (escaped === undefined) continue
    out += key.slice(from, i) + escaped
    from = i + 1
  }
  return from === 0 ? key : out + key.slice(from)
}

/**
 * The action session and resource type of a key kept whole (not of a fingerprint).
 *
 * @since 0.1.0
 * @category constructors
 */
export const keyParts = (key: string): UnsentAnswer => {
  const cut = key.indexOf("\u0000")
  return { actionSessionId: key.slice(0, cut), resourceType: key.slice(cut + 1) }
}

/**
 * A copy of `key` that shares no memory with the text it was cut from. V8 keeps
 * a slice of a string, and a concatenation, as a view of its parts: a key of 256 characters cut
 * from a 256 KiB action session id kept the whole id alive for the connection's life (600 such
 * requests held 150 MiB). Built from its code units, the copy is a string of its own. Chosen over
 * the alternatives: `Buffer` is Node's (the core uses none of it), a `TextEncoder` round trip
 * replaces a lone surrogate (two ids would share a key), `(" " + s).slice(1)` is a view again,
 * and hashing the whole key would lose the readable prefix. Keys are at most
 * {@link MAX_KEY_LENGTH} characters and copied once per request received (never per frame):
 * measured at 0.6 µs for 20 characters, 2 µs for 256 (Node 20, one core).
 */
const detached = (key: string): string => {
  const codes = new Array<number>(key.length)
  for (let i = 0; i < key.length; i++) codes[i] = key.charCodeAt(i)
  return String.fromCharCode(...codes)
}

/** What an unused ledger reads: nothing is allocated until a request arrives or an answer is queued. */
const noStatuses: ReadonlyMap<string, Status> = new Map()
const noAnswers: ReadonlyArray<QueuedAnswer> = []

/**
 * The ledger.
 *
 * @since 0.1.0
 * @category models
 */
export class Ledger {
  private statuses: Map<string, Status> | undefined = undefined
  /** When each request became pending (a count, for forgetting the oldest first). */
  private since: Map<string, number> | undefined = undefined
  private clock = 0
  private forgottenCount = 0
  private queue_: ReadonlyArray<QueuedAnswer> = noAnswers
  private written: ReadonlyArray<QueuedAnswer> = noAnswers

  /** Requests received on an earlier connection (another process's), still unanswered: pending. */
  constructor(pending: Iterable<string> = []) {
    for (const key of pending) this.received(key)
  }

  private set(key: string, status: Status): void {
    ;(this.statuses ??= new Map()).set(key, status)
  }

  /** Pending requests forgotten so far to keep the bound (an answer to one is `never-received`). */
  get forgotten(): number {
    return this.forgottenCount
  }

  /** The status of every request seen (a read-only view). */
  get requests(): ReadonlyMap<string, Status> {
    return this.statuses ?? noStatuses
  }

  /** Accepted, not written yet, oldest first (a read-only view): the head is written next. */
  get outbox(): ReadonlyArray<QueuedAnswer> {
    return this.queue_
  }

  /** Written on the current connection, waiting for a later frame that shows they got through. */
  get unconfirmed(): ReadonlyArray<QueuedAnswer> {
    return this.written
  }

  /** The status of a request, `undefined` if it was never received. */
  status(key: string): Status | undefined {
    return this.statuses === undefined ? undefined : this.statuses.get(key)
  }

  /** Its answer went through (`sent`): the request asked again is new (a replay that is delivered). */
  isAnswered(key: string): boolean {
    return this.status(key) === "sent"
  }

  /** Answers written and not confirmed yet. */
  get hasUnconfirmed(): boolean {
    return this.written.length > 0
  }

  /** The answer to write next, if any. */
  head(): QueuedAnswer | undefined {
    return this.queue_[0]
  }

  /**
   * The request arrived (again): pending, unless its answer waits to be written or confirmed. The
   * key is kept as a copy of its own (at most {@link MAX_KEY_LENGTH} characters): what the ledger
   * remembers never holds the frame it came from.
   */
  received(key: string): void {
    const was = this.status(key)
    if (was === "pending" || was === "queued" || was === "unconfirmed") return
    // Asked again after its answer went through: the entry, and the copy it holds, are kept.
    const own = was === undefined ? detached(key) : key
    this.set(own, "pending")
    ;(this.since ??= new Map()).set(own, this.clock++)
    if (this.requests.size > 2 * MAX_REQUESTS) this.prune()
  }

  /**
   * Forgets down to {@link MAX_REQUESTS} requests: the settled first, then the oldest pending;
   * never one whose answer is on its way.
   */
  private prune(): void {
    const statuses = this.statuses
    const since = this.since
    if (statuses === undefined || since === undefined) return
    const candidates: Array<readonly [string, number]> = []
    for (const [key, status] of statuses) {
      if (status === "sent") candidates.push([key, -1])
      else if (status === "pending") candidates.push([key, since.get(key) ?? 0])
    }
    candidates.sort((x, y) => x[1] - y[1])
    for (let i = 0; i < candidates.length && statuses.size > MAX_REQUESTS; i++) {
      const [key, at] = candidates[i]!
      statuses.delete(key)
      since.delete(key)
      if (at >= 0) this.forgottenCount += 1
    }
  }

  /** The written answers got through (a later event on their connection, or a clean end): sent. */
  confirm(): void {
    if (this.written.length === 0) return
    for (const answer of this.written) this.set(answer.key, "sent")
    this.written = noAnswers
  }

  /**
   * An event other than a keep-alive arrived; `request` is its key when it is a request. Answers
   * written before it are confirmed first, then the request is `received`.
   */
  event(request?: string): void {
    if (this.written.length > 0) this.confirm()
    if (request !== undefined) this.received(request)
  }

  /** Accepts an answer at the back of the outbox if its request is pending and the outbox has room. */
  queue(answer: QueuedAnswer, limit: number): Refusal | undefined {
    const was = this.status(answer.key)
    if (was === undefined) return "never-received"
    if (was !== "pending") return "already-answered"
    if (this.queue_.length >= limit) return "full"
    this.set(answer.key, "queued")
    this.queue_ = [...this.queue_, answer]
    return undefined
  }

  /**
   * The head was written: `"confirmed"` (the service acknowledged it: sent) or `"written"` (handed
   * to the open socket: unconfirmed until a later frame). An empty outbox is left as it is.
   */
  wrote(how: "confirmed" | "written"): void {
    const answer = this.queue_[0]
    if (answer === undefined) return
    this.queue_ = this.queue_.slice(1)
    if (how === "confirmed") {
      this.set(answer.key, "sent")
    } else {
      this.set(answer.key, "unconfirmed")
      this.written = [...this.written, answer]
    }
  }

  /** The service refused the head, not to be retried: dropped, its request pending again. */
  refused(): void {
    const answer = this.queue_[0]
    if (answer === undefined) return
    this.queue_ = this.queue_.slice(1)
    this.set(answer.key, "pending")
  }

  /**
   * The connection dropped: the unconfirmed answers may be lost, and are written again first
   * (queued, at the front of the outbox, in their order). Returns how many.
   */
  requeue(): number {
    const count = this.written.length
    if (count === 0) return 0
    for (const answer of this.written) this.set(answer.key, "queued")
    this.queue_ = [...this.written, ...this.queue_]
    this.written = noAnswers
    return count
  }

  /** The answers not delivered if the channel closed now (a `clean` end confirms the written ones). */
  unsent(clean: boolean): ReadonlyArray<UnsentAnswer> {
    const answers = clean ? this.queue_ : [...this.written, ...this.queue_]
    // From the answer itself: a long key is a fingerprint.
    return answers.map((answer) => ({
      actionSessionId: answer.data.action_session_id ?? keyParts(answer.key).actionSessionId,
      resourceType: answer.data.resource_type
    }))
  }

  /**
   * The channel closed for good: the answers not delivered, unconfirmed first, then the outbox. A
   * `clean` end (the close came after everything written, on the wire) confirms the written ones
   * first. The ledger is empty afterwards.
   */
  close(clean: boolean): ReadonlyArray<UnsentAnswer> {
    const unsent = this.unsent(clean)
    this.statuses = undefined
    this.since = undefined
    this.queue_ = noAnswers
    this.written = noAnswers
    return unsent
  }
}
