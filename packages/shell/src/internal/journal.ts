/**
 * Recording a session, without I/O (the shell's `Journal`: `Journal`, `JournalTap`): what a recorder
 * keeps between the moment a line is noted and the moment it is in the file. The shell notes lines
 * from its callbacks ({@link Journal.push}), and its one writer takes them in batches, encoded,
 * scrubbed and checked ({@link Journal.batch}), writes them and says so ({@link Journal.wrote}).
 * The queue is bounded in bytes: a writer that falls that far behind stops the recording, and so
 * does a line that would still hold a key. Re-exported by `Journal`.
 */
import { Json, Recording, type Connection, type Dialect } from "effect-agent-session-core"

/**
 * The bytes waiting to be written before a recording gives up, by default: 8 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultBufferSize = 8 * 1024 * 1024

/** The size an entry counts for in the queue's bound. */
const sizeOf = (entry: Recording.Entry): number => {
  if (entry.type !== "frame") return 256
  return 64 + ("text" in entry ? entry.text.length : "base64" in entry ? entry.base64.length : entry.data.length)
}

const describe = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : String(cause)

/**
 * What the header of a recording says of the session, as a recorder learns it (from the first
 * connection's start, else its options).
 *
 * @since 0.1.0
 * @category models
 */
export interface HeaderInfo {
  readonly sessionId: string
  readonly dialect: Dialect.Dialect
  readonly transport: Recording.Transport
}

/**
 * The header line of a recording made now (`recordedAt`, epoch milliseconds) by the SDK `sdk`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const headerOf = (info: HeaderInfo, sdk: string, recordedAt: number): Recording.Header => ({
  type: "header",
  format: Recording.FORMAT,
  version: Recording.VERSION,
  sdk,
  dialect: info.dialect,
  transport: info.transport,
  sessionId: info.sessionId,
  recordedAt: new Date(recordedAt).toISOString()
})

/**
 * What became of an answer written, as the format keeps it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerResult = (result: "confirmed" | "written" | Connection.WriteFailure): Recording.AnswerResult =>
  typeof result === "string" ? result : { failed: result.message, retry: result.retry }

/**
 * How an attempt ended, as the format keeps it: its errors encoded with the shell's `encode`, a
 * drop described by text kept as its `cause`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const outcomeEntry = <F, R>(
  ending: Exclude<Connection.Ending<F, R>, { readonly _tag: "Defect" } | { readonly _tag: "Overflow" }>,
  encode: (error: F | R) => Recording.EncodedError
): Recording.Outcome => {
  switch (ending._tag) {
    case "End":
      return { _tag: "End", reason: ending.reason }
    case "Fatal":
      return { _tag: "Fatal", reason: ending.reason, error: encode(ending.error) }
    case "Retry":
      return typeof ending.error === "string"
        ? { _tag: "Retry", cause: ending.error }
        : { _tag: "Retry", error: encode(ending.error) }
  }
}

/**
 * A frame as the format keeps it: text, a binary frame of UTF-8 text as text too (the SDK decodes
 * both alike, and so it is scrubbed like any other), other bytes as base64 (scrubbed as bytes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const frameEntry = (t: number, conn: number, data: string | Uint8Array): Recording.Entry => {
  const text = typeof data === "string" ? data : Json.decodeUtf8(data)
  return text !== undefined
    ? { type: "frame", t, conn, text }
    : { type: "frame", t, conn, base64: Recording.encodeBase64(data as Uint8Array) }
}

/**
 * Whether a session is the one recorded: the first one seen claims the recording (`recorded`);
 * another is not recorded, and the shell warns once (`warn` the first time, `other` after).
 *
 * @since 0.1.0
 * @category models
 */
export type Claim = "recorded" | "warn" | "other"

/**
 * Options of a {@link Journal}.
 *
 * @since 0.1.0
 * @category models
 */
export interface JournalOptions {
  /** The bytes the queue holds before the recording stops. Default {@link defaultBufferSize}. */
  readonly bufferSize?: number | undefined
  /** Applied to every line but the header, between two scrubs. */
  readonly redact?: ((entry: Recording.Entry) => Recording.Entry) | undefined
}

/**
 * The state of one recording between its lines noted and its lines written: the queue bounded in
 * bytes, the header, the session claimed, the connections numbered, how many lines are in the
 * file, and why the recording stopped, if it did. The shell's writer loops on {@link batch} and
 * {@link wrote}; a failure is kept once (the first one) and the queue is dropped with it.
 *
 * @example
 * ```ts
 * import { Dialect } from "effect-agent-session-core"
 * import { Journal } from "effect-agent-session-shell"
 *
 * const journal = new Journal.Journal({ bufferSize: 1024 })
 * journal.header = Journal.headerOf(
 *   { sessionId: "ses_1", dialect: Dialect.documented, transport: "websocket" },
 *   "0.1.0",
 *   0
 * )
 * journal.push({ type: "connect", t: 0, conn: 1 })
 * const lines = journal.batch(["sk-secret"])
 * console.log(Array.isArray(lines) ? lines.length : lines) // 2: the header, then the connect line
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Journal {
  /** The header to write first, once known. */
  header: Recording.Header | undefined = undefined
  /** Whether the header is in the file. */
  headerWritten = false
  /** The lines in the file. */
  written = 0
  /** Why the recording stopped (`undefined`: it goes on). */
  failure: string | undefined = undefined
  /** The session recorded, once one claimed it. */
  claimed: string | undefined = undefined
  private queue: Array<Recording.Entry> = []
  private queuedBytes = 0
  /** When the first line was noted (the clock's milliseconds). */
  private start: number | undefined = undefined
  private warnedOther = false
  private connections = 0
  readonly bufferSize: number

  constructor(private readonly options: JournalOptions = {}) {
    const size = options.bufferSize
    this.bufferSize = size !== undefined && size >= 1 ? size : defaultBufferSize
  }

  /**
   * The `t` of a line noted when the shell's clock reads `millis`: milliseconds since the first
   * line noted, whole, never negative.
   */
  time(millis: number): number {
    this.start ??= millis
    return Math.max(0, Math.round(millis - this.start))
  }

  /** How many lines wait to be written. */
  get pending(): number {
    return this.queue.length
  }

  /** Stops the recording with `message` (the first failure wins); `true` when this one stopped it. */
  fail(message: string): boolean {
    if (this.failure !== undefined) return false
    this.failure = message
    this.queue = []
    this.queuedBytes = 0
    return true
  }

  /**
   * Notes a line: queued, or dropped when the recording stopped. A line that takes the queue past
   * its bound stops the recording (`true`: this one stopped it, for the shell to report).
   */
  push(entry: Recording.Entry): boolean {
    if (this.failure !== undefined) return false
    this.queuedBytes += sizeOf(entry)
    if (this.queuedBytes > this.bufferSize) {
      return this.fail(`the writer fell behind the session by more than ${this.bufferSize} bytes: the recording stopped`)
    }
    this.queue.push(entry)
    return false
  }

  /** Whether `sessionId` is the session recorded (the first one seen claims it). */
  claim(sessionId: string): Claim {
    this.claimed ??= sessionId
    if (this.claimed === sessionId) return "recorded"
    if (this.warnedOther) return "other"
    this.warnedOther = true
    return "warn"
  }

  /** The recording's number of a new connection (1, 2, ...). */
  nextConnection(): number {
    this.connections += 1
    return this.connections
  }

  /**
   * Whether a batch can be taken: the recording goes on, and its header is known or in the file
   * (or `force`: a default one is written then).
   */
  ready(force: boolean): boolean {
    return this.failure === undefined && (force || this.headerWritten || this.header !== undefined)
  }

  /**
   * The lines of the next batch, taken from the queue: the header first while it is not in the
   * file (`header` makes it while it is unknown: nothing is taken without one), each line scrubbed
   * of `secrets`, redacted and scrubbed again. `undefined` when the recording stopped now (the
   * redact function failed, or a line would still hold a key in a form that cannot be redacted:
   * {@link failure} says which), or before.
   */
  batch(secrets: ReadonlyArray<string>, header?: () => Recording.Header): ReadonlyArray<string> | undefined {
    if (this.failure !== undefined) return undefined
    if (!this.headerWritten && this.header === undefined) {
      if (header === undefined) return []
      this.header = header()
    }
    const batch = this.queue
    this.queue = []
    this.queuedBytes = 0
    const lines: Array<string> = []
    if (!this.headerWritten && this.header !== undefined) lines.push(Recording.encodeLine(this.header))
    for (const entry of batch) {
      let line: string
      try {
        line = Recording.encodeLine(Recording.scrubEntry(this.redact(Recording.scrubEntry(entry, secrets)), secrets))
      } catch (cause) {
        this.fail(`the redact function failed: ${Recording.scrub(describe(cause), secrets)}`)
        return undefined
      }
      // A key in a form that cannot be redacted (its bytes in base64): refused, never written.
      const leaked = Recording.leak(line, secrets)
      if (leaked !== undefined) {
        this.fail(`a ${entry.type} line holds ${leaked} that cannot be redacted: the recording stopped before it`)
        return undefined
      }
      lines.push(line)
    }
    return lines
  }

  /** The lines of the last batch are in the file. */
  wrote(lines: number): void {
    this.headerWritten = true
    this.written += lines
  }

  /** Whether everything noted is in the file (the header too), and the recording goes on. */
  get settled(): boolean {
    return this.failure === undefined && this.queue.length === 0 && this.headerWritten
  }

  private redact(entry: Recording.Entry): Recording.Entry {
    return this.options.redact === undefined ? entry : this.options.redact(entry)
  }
}

/**
 * The numbering of one connection's attempts in a recording, and the `alive` lines it keeps (at
 * most one a second per attempt). `local` is the attempt's own number in the connection.
 *
 * @since 0.1.0
 * @category models
 */
export class JournalTap {
  private readonly numbers = new Map<number, number>()
  private readonly aliveAt = new Map<number, number>()

  constructor(private readonly journal: Journal) {}

  /** A new attempt: its number in the recording. */
  connect(local: number): number {
    const conn = this.journal.nextConnection()
    this.numbers.set(local, conn)
    return conn
  }

  /** The recording's number of an attempt (0 when it never connected). */
  conn(local: number): number {
    return this.numbers.get(local) ?? 0
  }

  /** Whether an `alive` of this attempt at `t` is kept: a second after the last one kept. */
  alive(local: number, t: number): boolean {
    const last = this.aliveAt.get(local)
    if (last !== undefined && t - last < 1000) return false
    this.aliveAt.set(local, t)
    return true
  }
}
