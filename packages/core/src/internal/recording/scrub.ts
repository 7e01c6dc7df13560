/**
 * Keeping secrets out of a recording (`Recording.scrub`, `scrubValue`, `scrubEntry`). Re-exported
 * by `Recording`.
 */
import { redactSecrets } from "../../Secrets.js"
import type { Entry } from "./model.js"

/** A JSON member whose name says it holds a key (`apiKey`, `api_key`, `x-api-key`, `Authorization`), with its value. */
const secretMember =
  /("(?:x[-_]?)?api[-_]?key"|"(?:proxy-)?authorization")(\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[^,}\]\s]*|true|false|null)/gi

/** Whether text may hold a key-named member. */
const mentionsKey = /api[-_]?key|authorization/i

/** A key-bearing query parameter of an address. */
const secretParameter = /([?&](?:apiKey|api_key|apikey|key|token|access_token)=)[^&#"\s]*/gi

/** A bearer credential in text. */
const bearer = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g

/**
 * What replaces a secret.
 *
 * @since 0.1.0
 * @category models
 */
export const REDACTED = "<redacted>"

/**
 * Text with every known secret, every key-named JSON member's value, every key-bearing query
 * parameter and every bearer credential replaced by `<redacted>`. Text without any of them is
 * returned as it is (a frame stays byte for byte what the service sent).
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = redactSecrets(text, secrets)
  // Each replacement only where its cheap sign is present (most frames have none).
  if (mentionsKey.test(out)) out = out.replace(secretMember, `$1$2"${REDACTED}"`)
  if (out.includes("=")) out = out.replace(secretParameter, `$1${REDACTED}`)
  if (out.includes("Bearer")) out = out.replace(bearer, `$1${REDACTED}`)
  return out
}

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
    out[name] = /^(?:x[-_]?)?api[-_]?key$|^(?:proxy-)?authorization$/i.test(name)
      ? REDACTED
      : scrubValue(member, secrets, depth + 1)
  }
  return out
}

/**
 * A line with no secret in it: the text of frames scrubbed as text, every other value member by member.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scrubEntry = (entry: Entry, secrets: ReadonlyArray<string>): Entry => {
  if (entry.type === "frame") {
    if ("text" in entry) return { ...entry, text: scrub(entry.text, secrets) }
    if ("event" in entry) return { ...entry, event: scrub(entry.event, secrets), data: scrub(entry.data, secrets) }
    return entry
  }
  return scrubValue(entry, secrets) as Entry
}
