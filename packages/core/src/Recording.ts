/**
 * The recording format, written once for both editions: what a line of a recorded session is,
 * how one is parsed and validated, how secrets are kept out of it, how two answers differ, how
 * frames cross transports, how a recorded connection's end is served again, what a replay may
 * accept, and a {@link Reader} that reads a recording line by line with bounded memory. No I/O
 * of its own: the reader takes the recording's bytes from a {@link Source} it is given (the
 * editions' shared glue, `effect-agent-session-shell`, opens a file as one: `FileSource.fromFile`).
 * Writing a recording (`Journal`) and replaying one in memory (`KitReplay`) belong to that glue;
 * the editions' shells (`Recording`, the test kit's replay, the simulator's `Replay`) do the rest.
 *
 * A recording is JSON Lines: one header line, then one line per thing that happened, in the order
 * it happened. The `effect-agent-session` package's docs/testing.md documents every line;
 * {@link Line} is the same in types.
 *
 * The format is written in parts, one concern each, under `internal/recording/` (the model, the
 * parsing of lines, secrets, differences, serving a recording again, reading a file, replaying
 * it in memory, journaling it); this module is the format's public face.
 *
 * @since 0.1.0
 */

export type {
  /**
   * The event channel's transport a session was recorded over.
   *
   * @since 0.1.0
   * @category models
   */
  Transport,
  /**
   * An error as an edition's `Errors.AgentSessionError` encodes it (decoded by the shells).
   *
   * @since 0.1.0
   * @category models
   */
  EncodedError,
  /**
   * A JSON object (a create request, a session as the SDK encodes it).
   *
   * @since 0.1.0
   * @category models
   */
  JsonObject,
  /**
   * The first line.
   *
   * @since 0.1.0
   * @category models
   */
  Header,
  /**
   * How one connection (attempt) ended, as the SDK's engine saw it.
   *
   * @since 0.1.0
   * @category models
   */
  Outcome,
  /**
   * An answer as it went on the wire (the core's `Frame.AnswerData`).
   *
   * @since 0.1.0
   * @category models
   */
  AnswerData,
  /**
   * What became of an answer written.
   *
   * @since 0.1.0
   * @category models
   */
  AnswerResult,
  /**
   * Every line but the header.
   *
   * @since 0.1.0
   * @category models
   */
  Entry,
  /**
   * A frame received: WebSocket text, WebSocket binary (base64), or a Server-Sent Event.
   *
   * @since 0.1.0
   * @category models
   */
  FrameEntry,
  /**
   * An answer written.
   *
   * @since 0.1.0
   * @category models
   */
  AnswerEntry,
  /**
   * A connection ended.
   *
   * @since 0.1.0
   * @category models
   */
  CloseEntry,
  /**
   * The event channel closed for good: the session's end.
   *
   * @since 0.1.0
   * @category models
   */
  EndEntry,
  /**
   * Any line.
   *
   * @since 0.1.0
   * @category models
   */
  Line,
  /**
   * A parse: the value, or why not.
   *
   * @since 0.1.0
   * @category models
   */
  Parsed
} from "./internal/recording/model.js"

export {
  /**
   * The `format` of the header line.
   *
   * @since 0.1.0
   * @category models
   */
  FORMAT,
  /**
   * The version this SDK writes, and the newest it reads.
   *
   * @since 0.1.0
   * @category models
   */
  VERSION
} from "./internal/recording/model.js"

export {
  /**
   * Parses the header line: a foreign file or a newer version is refused here.
   *
   * @since 0.1.0
   * @category combinators
   */
  parseHeader,
  /**
   * Parses a line after the header. Unknown `type`s are refused: the file is not of this version.
   *
   * @since 0.1.0
   * @category combinators
   */
  parseEntry,
  /**
   * The line of a value (no newline).
   *
   * @since 0.1.0
   * @category combinators
   */
  encodeLine
} from "./internal/recording/parse.js"

export {
  /**
   * What replaces a secret.
   *
   * @since 0.1.0
   * @category models
   */
  REDACTED,
  /**
   * Text with every secret it holds replaced by `<redacted>`.
   *
   * @since 0.1.0
   * @category combinators
   */
  scrub,
  /**
   * A value with every string scrubbed ({@link scrub}) and every key-named member redacted.
   *
   * @since 0.1.0
   * @category combinators
   */
  scrubValue,
  /**
   * A line with no secret in it: the text of frames scrubbed as text, the bytes of binary frames as
   * bytes, every other value member by member.
   *
   * @since 0.1.0
   * @category combinators
   */
  scrubEntry,
  /**
   * Bytes with every form of every secret overwritten by a placeholder of the same length, or
   * `undefined` when none holds one.
   *
   * @since 0.1.0
   * @category combinators
   */
  scrubBytes,
  /**
   * Whether an encoded line still holds a known secret (in base64, or a form that should have been
   * redacted): how, or `undefined`. A recorder refuses such a line rather than write it.
   *
   * @since 0.1.0
   * @category combinators
   */
  leak,
  /**
   * A binary frame's bytes as the format holds them (the `base64` member of a `frame` line).
   *
   * @since 0.1.0
   * @category combinators
   */
  encodeBase64,
  /**
   * The bytes of a binary frame's `base64` member, or `undefined` when it is not base64.
   *
   * @since 0.1.0
   * @category combinators
   */
  decodeBase64
} from "./internal/recording/scrub.js"

export {
  /**
   * The differences between two JSON values, one per line, or the empty string when they are equal.
   *
   * @since 0.1.0
   * @category combinators
   */
  difference
} from "./internal/recording/difference.js"

export type {
  /**
   * What a server does to end a connection as the recorded one ended.
   *
   * @since 0.1.0
   * @category models
   */
  ServerEnd
} from "./internal/recording/serve.js"

export {
  /**
   * The event name and payload text of a WebSocket frame in a framing, if it has them.
   *
   * @since 0.1.0
   * @category combinators
   */
  frameToEvent,
  /**
   * The WebSocket frame of a Server-Sent Event in a framing (the payload text spliced in as it is).
   *
   * @since 0.1.0
   * @category combinators
   */
  eventToFrame,
  /**
   * How a server ends a connection so that a client sees what the recorded one saw.
   *
   * @since 0.1.0
   * @category combinators
   */
  serverEndOf,
  /**
   * Why a server cannot end a connection this way (a status it cannot write, a close code it may
   * not send, a frame over {@link MAX_TOO_LARGE_SIZE}), if it cannot: such a line is not valid.
   *
   * @since 0.1.0
   * @category combinators
   */
  serverEndProblem,
  /**
   * The largest frame a recording may say was too large: 16 MiB (`Close.SKIPPABLE_FRAME_SIZE`),
   * as a replay server rebuilds it.
   *
   * @since 0.1.0
   * @category models
   */
  MAX_TOO_LARGE_SIZE,
  /**
   * Whether a recorded HTTP status can be served again: an integer from 200 to 599.
   *
   * @since 0.1.0
   * @category guards
   */
  isFinalStatus
} from "./internal/recording/serve.js"

export type {
  /**
   * The bytes of a recording, read in synchronous blocks.
   *
   * @since 0.1.0
   * @category models
   */
  ByteSource,
  /**
   * Opens a recording's bytes, once per reading.
   *
   * @since 0.1.0
   * @category models
   */
  Source,
  /**
   * Why a recording cannot be read further, and where.
   *
   * @since 0.1.0
   * @category models
   */
  Invalid,
  /**
   * An entry and its line.
   *
   * @since 0.1.0
   * @category models
   */
  Numbered,
  /**
   * The end of the file.
   *
   * @since 0.1.0
   * @category models
   */
  Done
} from "./internal/recording/reader.js"

export {
  /**
   * Cuts text into lines as it arrives, holding at most one unfinished line of a bounded length.
   *
   * @since 0.1.0
   * @category models
   */
  LineSplitter,
  /**
   * The longest line read by default: 16 Mi characters (a 1 MiB frame escaped is at most 6 MiB).
   *
   * @since 0.1.0
   * @category constructors
   */
  defaultMaxLineLength,
  /**
   * A recording open for reading, positioned after its header.
   *
   * @since 0.1.0
   * @category models
   */
  Reader
} from "./internal/recording/reader.js"

export type {
  /**
   * Why a replay cannot go on: the recording is not valid at a line, or the application did not do
   * what it holds there.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayProblem,
  /**
   * What a recorded create answers: the session, the error it got, or nothing recorded.
   *
   * @since 0.1.0
   * @category models
   */
  CreateAnswer,
  /**
   * How a recorded connection ended, for the shell to end its attempt alike.
   *
   * @since 0.1.0
   * @category models
   */
  RecordedEnd
} from "./internal/recording/replay.js"

export {
  /**
   * The error tags a create can fail with, as the editions name them.
   *
   * @since 0.1.0
   * @category models
   */
  createErrorTags,
  /**
   * The error tags the event channel can end with.
   *
   * @since 0.1.0
   * @category models
   */
  eventChannelErrorTags,
  /**
   * The reasons a connection ends for good (`Connection.CloseReason`).
   *
   * @since 0.1.0
   * @category models
   */
  closeReasons,
  /**
   * How a `close` line's outcome ends the replayed attempt, or why it is not valid.
   *
   * @since 0.1.0
   * @category combinators
   */
  recordedEnd,
  /**
   * Whether a value is a {@link ReplayProblem} (and not a step of the replay).
   *
   * @since 0.1.0
   * @category guards
   */
  isReplayProblem,
  /**
   * The recorded answer against the application's: the `Mismatch` to report, or nothing when they
   * are the same.
   *
   * @since 0.1.0
   * @category combinators
   */
  checkAnswer,
  /**
   * One pass over a recording, replaying one session in memory.
   *
   * @since 0.1.0
   * @category models
   */
  ReplayPass,
  /**
   * The `Mismatch` of a create where the recording holds none (a recording of `attach`).
   *
   * @since 0.1.0
   * @category constructors
   */
  unrecordedCreate,
  /**
   * The `Mismatch` of an answer the application gave that the recording does not hold.
   *
   * @since 0.1.0
   * @category constructors
   */
  unrecordedAnswer,
  /**
   * The application's answers on a replayed connection, compared with the recorded ones oldest first.
   *
   * @since 0.1.0
   * @category models
   */
  GivenAnswers,
  /**
   * Whether an answer given is one the recording never holds, about to play a line of a connection.
   *
   * @since 0.1.0
   * @category combinators
   */
  checkUnrecorded
} from "./internal/recording/replay.js"
