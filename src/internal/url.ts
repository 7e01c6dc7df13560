/**
 * Address checks shared by the HTTP client (`AgentApi`) and the event channel (`EventStream`):
 * a key is never sent in clear to a host that is not loopback unless the caller allows it.
 */
import * as Either from "effect/Either"
import { InsecureTransport } from "../Errors.js"

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

/**
 * Whether a host name (as `URL.hostname` gives it) is loopback: `localhost` (and `*.localhost`),
 * `127.0.0.0/8`, `::1` (with or without brackets) and `::ffff:127.x.y.z`.
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

/** The address without credentials, query string or fragment: safe to print. */
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
 * Checks that a key may be sent to an address: `https:`/`wss:` always; `http:`/`ws:` only to a
 * loopback host ({@link isLoopbackHost}) or with `allowInsecure`. Any other scheme, or text that
 * is not an absolute URL, is refused as well. `Right` holds the address (`URL.href`).
 */
export const checkSecureUrl = (
  url: URL | string,
  allowInsecure: boolean
): Either.Either<string, InsecureTransport> => {
  if (typeof url === "string" && !URL.canParse(url)) {
    return Either.left(new InsecureTransport({ url: printableUrl(url) }))
  }
  const parsed = new URL(url)
  if (SECURE.has(parsed.protocol)) return Either.right(parsed.href)
  if (PLAIN.has(parsed.protocol) && (allowInsecure || isLoopbackHost(parsed.hostname))) {
    return Either.right(parsed.href)
  }
  return Either.left(new InsecureTransport({ url: printableUrl(parsed) }))
}
