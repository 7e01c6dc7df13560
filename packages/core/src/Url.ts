/**
 * Address rules shared by the HTTP client and the event channel: a key is never sent in clear to
 * a host that is not loopback unless the caller allows it; what is printed of an address carries
 * no credentials; how a base URL and a path are joined, and where the handshake goes.
 *
 * @since 0.1.0
 */
import type { Handshake } from "./Dialect.js"

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

/**
 * Whether a host name (as `URL.hostname` gives it) is loopback: `localhost` (and `*.localhost`),
 * `127.0.0.0/8`, `::1` (with or without brackets) and `::ffff:127.x.y.z`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isLoopbackHost = (hostname: string): boolean => {
  let host = hostname.trim().toLowerCase()
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
  if (host.endsWith(".")) host = host.slice(0, -1)
  if (host === "localhost" || host.endsWith(".localhost")) return true
  if (IPV4_LOOPBACK.test(host)) return true
  if (host === "::1" || host === "0:0:0:0:0:0:0:1") return true
  // IPv4-mapped IPv6, as URL normalises it (`::ffff:7f00:1`) or written out (`::ffff:127.0.0.1`).
  if (host.startsWith("::ffff:")) {
    const rest = host.slice("::ffff:".length)
    if (IPV4_LOOPBACK.test(rest)) return true
    const high = rest.split(":")[0]
    return high !== undefined && /^7f[0-9a-f]{2}$/.test(high)
  }
  return false
}

/**
 * The address without credentials, query string or fragment: safe to print.
 *
 * @since 0.1.0
 * @category constructors
 */
export const printableUrl = (url: URL | string): string => {
  if (typeof url === "string" && !URL.canParse(url)) {
    const cut = url.search(/[?#]/)
    return (cut === -1 ? url : url.slice(0, cut)).replace(/\/\/[^/@]*@/, "//")
  }
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

const SECURE = new Set(["https:", "wss:"])
const PLAIN = new Set(["http:", "ws:"])

/**
 * What {@link checkSecureUrl} found: the address to use, or the printable address refused.
 *
 * @since 0.1.0
 * @category models
 */
export type SecureUrl =
  | { readonly _tag: "Secure"; readonly href: string }
  | { readonly _tag: "Insecure"; readonly printable: string }

/**
 * Whether a key may be sent to an address: `https:`/`wss:` always; `http:`/`ws:` only to a
 * loopback host ({@link isLoopbackHost}) or with `allowInsecure`. Any other scheme, or text that
 * is not an absolute URL, is refused as well.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkSecureUrl = (url: URL | string, allowInsecure: boolean): SecureUrl => {
  if (typeof url === "string" && !URL.canParse(url)) return { _tag: "Insecure", printable: printableUrl(url) }
  const parsed = new URL(url)
  if (SECURE.has(parsed.protocol) || (PLAIN.has(parsed.protocol) && (allowInsecure || isLoopbackHost(parsed.hostname)))) {
    return { _tag: "Secure", href: parsed.href }
  }
  return { _tag: "Insecure", printable: printableUrl(parsed) }
}

/**
 * What {@link checkBaseUrl} found.
 *
 * @since 0.1.0
 * @category models
 */
export type BaseUrl =
  | { readonly _tag: "Valid"; readonly url: string }
  | { readonly _tag: "Invalid"; readonly message: string }
  | { readonly _tag: "Insecure"; readonly printable: string }

/**
 * The base URL of the HTTP API: an absolute `http(s)` URL without credentials, query string or
 * fragment, secure by {@link checkSecureUrl}; given back without trailing slashes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkBaseUrl = (baseUrl: string | URL, allowInsecure: boolean): BaseUrl => {
  const text = baseUrl.toString().trim()
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return { _tag: "Invalid", message: "baseUrl: must be an absolute http(s) URL" }
  }
  if (url.search.length > 0 || url.hash.length > 0 || url.username.length > 0 || url.password.length > 0) {
    return { _tag: "Invalid", message: "baseUrl: must not carry credentials, a query string or a fragment" }
  }
  const checked = checkSecureUrl(url, allowInsecure)
  return checked._tag === "Secure" ? { _tag: "Valid", url: checked.href.replace(/\/+$/, "") } : checked
}

/**
 * Joins a base URL and a path without doubling or dropping the slash between them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const joinPath = (base: string, path: string): string =>
  `${base.endsWith("/") ? base.slice(0, -1) : base}${path.startsWith("/") ? path : `/${path}`}`

/**
 * The address of the event channel (or the SSE stream) for a session: the base, the path, and,
 * when the handshake goes in the query, `sessionId` and `apiKey` parameters. It holds the
 * key when the handshake is in the query: print it only through `Secrets.redactUrl`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectUrl = (options: {
  readonly base: string
  readonly path: string
  readonly handshake: Handshake
  readonly sessionId: string
  readonly apiKey: string
}): string => {
  const url = new URL(joinPath(options.base, options.path))
  if (options.handshake !== "message") {
    url.searchParams.set("sessionId", options.sessionId)
    url.searchParams.set("apiKey", options.apiKey)
  }
  return url.toString()
}
