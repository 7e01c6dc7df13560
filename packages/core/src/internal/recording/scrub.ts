/**
 * Keeping secrets out of a recording (`Recording.scrub`, `scrubValue`, `scrubEntry`, `leak`).
 * Re-exported by `Recording`.
 *
 * What is secret: the keys the recorder knows (filtered exactly, as VCR's and Polly.js's filters
 * do, in the forms text gives them: as they are, percent-encoded, JSON-escaped; in a binary
 * frame's bytes as UTF-8 and UTF-16), the value of a member named like a key (`apiKey`,
 * `x-api-key`, `Authorization`), the dialect's own credential parameter (`apiKey=` of
 * `Url.connectUrl`) and a `Bearer` credential. A parameter that is only named like one
 * (`?key=pizza`, `?token=...` of the application's own `start_url`) is not: redacting it would
 * make the recording differ from what the application sends when it is replayed.
 *
 * JSON text is scrubbed token by token, on decoded values (a key written with `\u` escapes is
 * found; a redaction never splits an escape), and re-encoded only where something changed: valid
 * JSON stays valid JSON, and text without a secret stays byte for byte what the service sent.
 */
import type { Entry } from "./model.js"

/**
 * What replaces a secret.
 *
 * @since 0.1.0
 * @category models
 */
export const REDACTED = "<redacted>"

const QUOTED_REDACTED = `"${REDACTED}"`

/** The name of a member whose value is a key. */
const keyName = /^(?:x[-_]?)?api[-_]?key$|^(?:proxy-)?authorization$/i

/** A key-named member with its value, in text that is not JSON (a frame cut short, a message). */
const secretMember =
  /("(?:x[-_]?)?api[-_]?key"|"(?:proxy-)?authorization")(\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[^,}\]\s]*|true|false|null)/gi

/** Whether text may hold a key-named member. */
const mentionsKey = /api[-_]?key|authorization/i

/** The dialect's credential parameter (`Url.connectUrl`'s `apiKey`); it stops before an escape. */
const credentialParameter = /([?&]apiKey=)[^&#\s"\\]*/g

/** A bearer credential in text. */
const bearer = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g

/** How deep JSON held in JSON strings is scrubbed as JSON. */
const MAX_DEPTH = 8

/** A secret percent-encoded, when it can be. */
const percentEncoded = (secret: string): string | undefined => {
  try {
    return encodeURIComponent(secret)
  } catch {
    // A lone surrogate has no percent-encoding.
    return undefined
  }
}

/** The forms a secret takes in text: as it is, percent-encoded, JSON-escaped (longest first). */
const textForms = (secret: string): ReadonlyArray<string> => {
  const forms = new Set<string>([secret, JSON.stringify(secret).slice(1, -1)])
  const percent = percentEncoded(secret)
  if (percent !== undefined) forms.add(percent)
  return [...forms].sort((a, b) => b.length - a.length)
}

/** Text with every form of every secret replaced. */
const redactKnown = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length === 0) continue
    for (const form of textForms(secret)) {
      if (out.includes(form)) out = out.split(form).join(REDACTED)
    }
  }
  return out
}

/** Whether text may hold something to redact (most frames do not: they are kept as they are). */
const mayHoldSecret = (text: string, secrets: ReadonlyArray<string>): boolean =>
  // An escape may hide a key or a key-named member in JSON.
  text.includes("\\") || text.includes("apiKey=") || text.includes("Bearer") || mentionsKey.test(text) ||
  secrets.some((secret) => secret.length > 0 && textForms(secret).some((form) => text.includes(form)))

/** Text that is not JSON, scrubbed as text. */
const scrubLoose = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = redactKnown(text, secrets)
  if (mentionsKey.test(out)) out = out.replace(secretMember, `$1$2${QUOTED_REDACTED}`)
  if (out.includes("apiKey=")) out = out.replace(credentialParameter, `$1${REDACTED}`)
  if (out.includes("Bearer")) out = out.replace(bearer, `$1${REDACTED}`)
  return out
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** A JSON string token decoded (tokens come from valid JSON: undefined never happens). */
const decodeToken = (token: string): string | undefined => {
  try {
    const value: unknown = JSON.parse(token)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/** A JSON string token at a position (sticky). */
const stringToken = /"(?:[^"\\]|\\.)*"/y

/** Where the JSON string starting at `at` ends (after its closing quote). */
const stringEnd = (text: string, at: number): number => {
  stringToken.lastIndex = at
  return stringToken.test(text) ? stringToken.lastIndex : text.length
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

/** Whether a character ends a literal (a number, `true`, `false`, `null`). */
const endsLiteral = (c: number): boolean =>
  isSpace(c) || c === 0x2c || c === 0x3a || c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d || c === 0x22

const skipSpace = (text: string, at: number): number => {
  let i = at
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  return i
}

const literalEnd = (text: string, at: number): number => {
  let i = at
  while (i < text.length && !endsLiteral(text.charCodeAt(i))) i++
  return i
}

/** Where the JSON value starting at `at` ends. */
const valueEnd = (text: string, at: number): number => {
  const c = text.charCodeAt(at)
  if (c === 0x22) return stringEnd(text, at)
  if (c !== 0x7b && c !== 0x5b) return literalEnd(text, at)
  let depth = 0
  let i = at
  while (i < text.length) {
    const d = text.charCodeAt(i)
    if (d === 0x22) {
      i = stringEnd(text, i)
      continue
    }
    if (d === 0x7b || d === 0x5b) depth++
    else if (d === 0x7d || d === 0x5d) {
      depth--
      if (depth === 0) return i + 1
    }
    i++
  }
  return text.length
}

/**
 * Valid JSON scrubbed token by token: each string decoded, scrubbed and re-encoded where it
 * changed; the value of a key-named member replaced whole; a literal holding a key replaced by a
 * string. Everything else is kept as it is.
 */
const scrubJson = (text: string, secrets: ReadonlyArray<string>, depth: number): string => {
  let out = ""
  let kept = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const end = stringEnd(text, i)
      const value = decodeToken(text.slice(i, end))
      const colon = skipSpace(text, end)
      if (value !== undefined && text.charCodeAt(colon) === 0x3a && keyName.test(value)) {
        const start = skipSpace(text, colon + 1)
        const stop = valueEnd(text, start)
        out += text.slice(kept, start) + QUOTED_REDACTED
        kept = stop
        i = stop
        continue
      }
      if (value !== undefined) {
        const scrubbed = scrubText(value, secrets, depth + 1)
        if (scrubbed !== value) {
          out += text.slice(kept, i) + JSON.stringify(scrubbed)
          kept = end
        }
      }
      i = end
      continue
    }
    if (!endsLiteral(c)) {
      const end = literalEnd(text, i)
      const literal = text.slice(i, end)
      if (secrets.some((secret) => secret.length > 0 && literal.includes(secret))) {
        out += text.slice(kept, i) + QUOTED_REDACTED
        kept = end
      }
      i = end
      continue
    }
    i++
  }
  return kept === 0 ? text : out + text.slice(kept)
}

const scrubText = (text: string, secrets: ReadonlyArray<string>, depth: number): string => {
  if (!mayHoldSecret(text, secrets)) return text
  return depth < MAX_DEPTH && isJson(text) ? scrubJson(text, secrets, depth) : scrubLoose(text, secrets)
}

/**
 * Text with every known secret (as it is, percent-encoded or JSON-escaped), every key-named JSON
 * member's value, the dialect's credential parameter (`apiKey=`) and every bearer credential
 * replaced by `<redacted>`. Valid JSON is scrubbed on its decoded strings and stays valid JSON.
 * Text without any of them is returned as it is (a frame stays byte for byte what the service
 * sent).
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => scrubText(text, secrets, 0)

/**
 * A value with every string scrubbed ({@link scrub}) and every key-named member redacted.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubValue = (value: unknown, secrets: ReadonlyArray<string>, depth = 0): unknown => {
  if (typeof value === "string") return scrub(value, secrets)
  if (depth > 64 || typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    out[name] = keyName.test(name) ? REDACTED : scrubValue(member, secrets, depth + 1)
  }
  return out
}

const utf8 = new TextEncoder()

/** Text as UTF-16 code units in bytes. */
const utf16 = (text: string, littleEndian: boolean): Uint8Array => {
  const bytes = new Uint8Array(text.length * 2)
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    bytes[littleEndian ? 2 * i : 2 * i + 1] = unit & 0xff
    bytes[littleEndian ? 2 * i + 1 : 2 * i] = unit >> 8
  }
  return bytes
}

/** The placeholder of a secret `length` units long: `<redacted>` fitted to that length. */
const placeholder = (length: number): string =>
  length >= REDACTED.length ? `${REDACTED.slice(0, -1)}${"*".repeat(length - REDACTED.length)}>` : "*".repeat(length)

/**
 * The forms a secret takes in bytes, each with its same-length placeholder: its text forms in
 * UTF-8, and as it is in UTF-16 (both byte orders).
 */
const byteForms = (secret: string): ReadonlyArray<readonly [Uint8Array, Uint8Array]> => [
  ...textForms(secret).map((form): readonly [Uint8Array, Uint8Array] => {
    const bytes = utf8.encode(form)
    return [bytes, utf8.encode(placeholder(bytes.length))]
  }),
  [utf16(secret, true), utf16(placeholder(secret.length), true)],
  [utf16(secret, false), utf16(placeholder(secret.length), false)]
]

/** Where `needle` occurs in `bytes` from `from`, or -1. */
const indexOfBytes = (bytes: Uint8Array, needle: Uint8Array, from: number): number => {
  const first = needle[0]
  if (first === undefined) return -1
  let at = bytes.indexOf(first, from)
  while (at >= 0 && at + needle.length <= bytes.length) {
    let i = 1
    while (i < needle.length && bytes[at + i] === needle[i]) i++
    if (i === needle.length) return at
    at = bytes.indexOf(first, at + 1)
  }
  return -1
}

/**
 * Bytes with every form of every secret overwritten by a placeholder of the same length (a binary
 * format's lengths and offsets stay right), or `undefined` when none holds one.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubBytes = (bytes: Uint8Array, secrets: ReadonlyArray<string>): Uint8Array | undefined => {
  let out: Uint8Array | undefined
  for (const secret of secrets) {
    if (secret.length === 0) continue
    for (const [form, replacement] of byteForms(secret)) {
      let at = indexOfBytes(out ?? bytes, form, 0)
      while (at >= 0) {
        out ??= Uint8Array.from(bytes)
        out.set(replacement, at)
        at = indexOfBytes(out, form, at + form.length)
      }
    }
  }
  return out
}

const toBinaryString = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return out
}

/** Bytes in base64. */
export const encodeBase64 = (bytes: Uint8Array): string => btoa(toBinaryString(bytes))

/** Base64 decoded, or `undefined` when it is not base64. */
export const decodeBase64 = (text: string): Uint8Array | undefined => {
  try {
    const binary = atob(text)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

/**
 * A line with no secret in it: the text of frames scrubbed as text, the bytes of binary frames
 * as bytes ({@link scrubBytes}), every other value member by member.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubEntry = (entry: Entry, secrets: ReadonlyArray<string>): Entry => {
  if (entry.type === "frame") {
    if ("text" in entry) return { ...entry, text: scrub(entry.text, secrets) }
    if ("event" in entry) return { ...entry, event: scrub(entry.event, secrets), data: scrub(entry.data, secrets) }
    const bytes = decodeBase64(entry.base64)
    const scrubbed = bytes === undefined ? undefined : scrubBytes(bytes, secrets)
    return scrubbed === undefined ? entry : { ...entry, base64: encodeBase64(scrubbed) }
  }
  return scrubValue(entry, secrets) as Entry
}

/** The shortest secret {@link leak} looks for (a shorter one would be found by chance). */
const LEAK_MIN_LENGTH = 8

/**
 * The runs of base64 every base64 text holding the secret's UTF-8 bytes contains, whatever the
 * bytes' offset (one per offset modulo 3), in both alphabets.
 */
const base64Forms = (secret: string): ReadonlyArray<string> => {
  const bytes = utf8.encode(secret)
  const forms = new Set<string>()
  for (let shift = 0; shift < 3; shift++) {
    const aligned = bytes.subarray(shift, shift + Math.floor((bytes.length - shift) / 3) * 3)
    if (aligned.length < 6) continue
    const standard = encodeBase64(aligned)
    forms.add(standard)
    forms.add(standard.replace(/\+/g, "-").replace(/\//g, "_"))
  }
  return [...forms]
}

/**
 * Whether an encoded line still holds a known secret (of {@link LEAK_MIN_LENGTH} characters or
 * more) in a form a recorder cannot redact (`base64`: the secret's bytes base64-encoded) or should
 * have redacted (as it is, percent-encoded, JSON-escaped): how, or `undefined` when it does not.
 * A recorder refuses such a line rather than write it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const leak = (line: string, secrets: ReadonlyArray<string>): string | undefined => {
  for (const secret of secrets) {
    if (secret.length < LEAK_MIN_LENGTH) continue
    if (textForms(secret).some((form) => line.includes(form))) return "a known key"
    if (base64Forms(secret).some((form) => line.includes(form))) return "a known key in base64"
  }
  return undefined
}
