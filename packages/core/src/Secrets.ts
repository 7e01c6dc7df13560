/**
 * Keys out of text: what the SDK may keep of text a peer chose (an error body, a frame, a close
 * reason, a header) never holds a key, whether the key is one the caller knows or one the peer
 * put in a member named like a key. And raw text kept on errors is bounded.
 *
 * @since 0.1.0
 */

/**
 * The most raw text (a body, a frame) an error keeps: 4,096 UTF-16 units.
 *
 * @since 0.1.0
 * @category models
 */
export const RAW_LIMIT = 4096

/**
 * Cuts raw text to the first {@link RAW_LIMIT} units kept on errors (`body` of HTTP errors, `raw`
 * of frame errors), never splitting a surrogate pair.
 *
 * @since 0.1.0
 * @category constructors
 */
export const truncateRaw = (text: string): string => {
  if (text.length <= RAW_LIMIT) return text
  // Cut before a high surrogate that would lose its partner.
  const last = text.charCodeAt(RAW_LIMIT - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? RAW_LIMIT - 1 : RAW_LIMIT)
}

/**
 * Replaces every occurrence of each secret in `text` by `<redacted>` (empty secrets are ignored).
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactSecrets = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length > 0 && out.includes(secret)) {
      out = out.split(secret).join("<redacted>")
    }
  }
  return out
}

/**
 * The text fields of an error (a frame's `raw`, a `message`, an event name), with `key` redacted
 * from every one, when any holds it; `undefined` when none does (the error is kept as it is).
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactFields = <T extends { readonly [field: string]: string }>(fields: T, key: string): T | undefined => {
  if (key.length === 0 || !Object.values(fields).some((value) => value.includes(key))) return undefined
  const out: { [field: string]: string } = {}
  for (const [field, value] of Object.entries(fields)) out[field] = redactSecrets(value, [key])
  return out as T
}

/** JSON members whose value is a secret, whatever the service put there. */
const SECRET_MEMBER =
  /("(?:api[_-]?key|apikey|x-api-key|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|authorization)"\s*:\s*)"(?:[^"\\]|\\.)*("?)/gi

/** A bearer credential written in text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g

/**
 * Text from an HTTP peer made safe to keep: every known secret, the value of any JSON member
 * named like a key (`apiKey`, `token`, `password`, ...), and any `Bearer <token>` redacted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string =>
  redactSecrets(text, secrets)
    .replace(SECRET_MEMBER, (_match, prefix: string, closing: string) => `${prefix}"<redacted>${closing}`)
    .replace(BEARER, "$1<redacted>")

/** A query parameter that carries a key. */
const KEYED_PARAMETER = /([?&](?:apiKey|api_key|apikey|key|token|access_token)=)[^&#]*/gi

/**
 * An address with the value of every key-bearing query parameter (`apiKey`, `api_key`, `key`,
 * `token`, `access_token`) replaced by `<redacted>`: for logs, spans and errors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactUrl = (url: string): string => url.replace(KEYED_PARAMETER, "$1<redacted>")

/**
 * Text of the event channel (a close reason, a socket error) made safe to keep: the connection's
 * key redacted, and any key-bearing query parameter of an address in it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scrubChannelText = (text: string, key: string): string => redactUrl(redactSecrets(text, [key]))
