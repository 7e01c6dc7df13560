/**
 * What the command line writes to a terminal or pastes into a shell, made safe: text from the
 * service (thoughts, action names and contents, URLs, ids, `error` events, the response, the
 * messages of HTTP errors) never reaches the terminal with a control character in it.
 *
 * A control character here is any code point of C0 (`U+0000`-`U+001F`: ESC, CR, BEL, ...), DEL
 * (`U+007F`), C1 (`U+0080`-`U+009F`: a terminal may read `U+009B` as CSI and `U+009D` as OSC), or a
 * bidirectional formatting character (`U+061C`, `U+200E`, `U+200F`, `U+202A`-`U+202E`,
 * `U+2066`-`U+2069`: they reorder what is shown). Each is shown visibly escaped (`\x1b`,
 * `\u{202e}`), so an OSC 52 clipboard write, an OSC 8 link, a title change, a screen clear or a
 * carriage return that would overwrite a line is printed as inert text. Newlines are kept only
 * where a block of lines is allowed ({@link block}); tabs become spaces.
 *
 * The command line applies these at its render boundary: `Render.sinkOf` sanitises every string
 * written to standard output and standard error with {@link block}, the live view sanitises each
 * service string with {@link line} before drawing it between its own escape codes, `--json`
 * output is written with {@link json}, and the SDK's logs pass through {@link block}.
 *
 * @since 0.1.0
 */

/** The control characters of the module overview, as one character class (`u` flag). */
const controls = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069"

const anyControl = new RegExp(`[${controls}]`, "u")
const everyControl = new RegExp(`[${controls}]`, "gu")
const everyControlButNewline = new RegExp(`[${controls.replace("\\u0000-\\u001f", "\\u0000-\\u0009\\u000b-\\u001f")}]`, "gu")

/** `\x1b` for the first 256 code points, `\u{202e}` beyond. */
const escapeOne = (char: string): string => {
  const code = char.codePointAt(0) ?? 0
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`
}

/**
 * Whether a string holds a control character (of the module overview; a newline counts).
 *
 * @since 0.1.0
 * @category guards
 */
export const hasControl = (text: string): boolean => anyControl.test(text)

/**
 * One line of text, safe for a terminal: runs of white space (newlines, carriage returns, tabs
 * included) become one space, the ends are trimmed, and every other control character is
 * escaped visibly: `"a\r\nb\x1b]52;c;aGk=\x07"` becomes `a b\x1b]52;c;aGk=\x07` (the escapes as text).
 *
 * @since 0.1.0
 * @category constructors
 */
export const line = (text: string): string => text.replace(/\s+/g, " ").trim().replace(everyControl, escapeOne)

/**
 * A block of lines, safe for a terminal: line breaks (`\n`, `\r\n`) are kept, a tab becomes four
 * spaces, and every other control character (a lone carriage return included) is escaped
 * visibly. Applying it twice changes nothing more.
 *
 * @since 0.1.0
 * @category constructors
 */
export const block = (text: string): string =>
  text.replace(/\r\n/g, "\n").replace(/\t/g, "    ").replace(everyControlButNewline, escapeOne)

/**
 * `JSON.stringify` whose output holds no control character: JSON escapes C0 already; DEL, C1,
 * the bidirectional formatting characters and `U+2028`/`U+2029` are written as `\uXXXX` escapes
 * too. The text parses back to the same value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`
  )

/**
 * A word for a POSIX shell (sh, bash, zsh): left bare when it holds only characters no shell
 * gives a meaning to (letters, digits and `_ - . / : @ + ,`), else single-quoted (a `'` inside
 * written `'\''`). Control characters are escaped visibly first ({@link line}), so the word is
 * also safe to print; a word that needed that escaping no longer names the same thing, which the
 * caller can tell with {@link hasControl}. `ses_1` stays `ses_1`; `ses_1;curl x|sh` becomes
 * `'ses_1;curl x|sh'`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const shellWord = (word: string): string => {
  const visible = word.replace(everyControl, escapeOne)
  return /^[A-Za-z0-9_\-./:@+,]+$/.test(visible) ? visible : `'${visible.replace(/'/g, `'\\''`)}'`
}
