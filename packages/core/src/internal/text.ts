/**
 * Text from the service made safe to print: control characters escaped, an id quoted as one word
 * of a shell. Used by `Failures.orphanNotice`; not a rule of the protocol, so not exported by the
 * package.
 */

/** Control characters (C0, DEL, C1, bidi controls), escaped as `\u{..}`: never raw to a terminal. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text with every control character (C0, DEL, C1, bidirectional controls) escaped as `\u{..}`, so
 * that text from the service printed to a terminal cannot move the cursor or reorder the line.
 */
export const printable = (text: string): string =>
  text.replace(CONTROL, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)

/**
 * An id as one word of a POSIX shell: bare when made of safe characters, else single-quoted (and
 * {@link printable}).
 */
export const shellQuoted = (id: string): string =>
  /^[A-Za-z0-9_.:@%+=,/-]+$/.test(id) ? id : `'${printable(id).replace(/'/g, "'\\''")}'`
