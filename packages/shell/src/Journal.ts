/**
 * Recording a session, without I/O: what a recorder keeps between the moment a line is noted and
 * the moment it is in the file. The shell notes lines from its callbacks, its one writer takes
 * them in batches (encoded, scrubbed, checked), writes them and says so. The queue is bounded in
 * bytes: a writer that falls that far behind stops the recording, and so does a line that would
 * still hold a key. The lines are the core's `Recording` format.
 *
 * @since 0.1.0
 */
export type {
  /**
   * What a recording's header says of the session (its id, dialect and transport).
   *
   * @since 0.1.0
   * @category models
   */
  HeaderInfo,
  /**
   * Whether a session is the one recorded, or another (the shell warns once).
   *
   * @since 0.1.0
   * @category models
   */
  Claim,
  /**
   * Options of a {@link Journal}: the queue's bound in bytes, the `redact` function.
   *
   * @since 0.1.0
   * @category models
   */
  JournalOptions
} from "./internal/journal.js"

export {
  /**
   * The bytes waiting to be written before a recording gives up, by default: 8 MiB.
   *
   * @since 0.1.0
   * @category models
   */
  defaultBufferSize,
  /**
   * The header line of a recording made now by an SDK.
   *
   * @since 0.1.0
   * @category constructors
   */
  headerOf,
  /**
   * What became of an answer written, as the format keeps it.
   *
   * @since 0.1.0
   * @category constructors
   */
  answerResult,
  /**
   * How an attempt ended, as the format keeps it (its errors encoded by the shell).
   *
   * @since 0.1.0
   * @category constructors
   */
  outcomeEntry,
  /**
   * A frame as the format keeps it: text (a binary frame of UTF-8 text too), else base64.
   *
   * @since 0.1.0
   * @category constructors
   */
  frameEntry,
  /**
   * A recorder's state without I/O: its lines noted, queued (bounded in bytes), encoded, scrubbed
   * and checked in batches for its writer, the session claimed, and why it stopped.
   *
   * @since 0.1.0
   * @category models
   */
  Journal,
  /**
   * The numbering of one connection's attempts in a recording, and the `alive` lines kept.
   *
   * @since 0.1.0
   * @category models
   */
  JournalTap
} from "./internal/journal.js"
