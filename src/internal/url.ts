/**
 * The address rules of the protocol core (`Url`), with the SDK's typed error: a key is never sent
 * in clear to a host that is not loopback unless the caller allows it.
 */
import * as Either from "effect/Either"
import { Url } from "effect-agent-session-core"
import { InsecureTransport } from "../Errors.js"

/** The address without credentials, query string or fragment: safe to print. */
export const printableUrl = Url.printableUrl

/**
 * Checks that a key may be sent to an address (`Url.checkSecureUrl`). `Right` holds the address
 * (`URL.href`).
 */
export const checkSecureUrl = (url: URL | string, allowInsecure: boolean): Either.Either<string, InsecureTransport> => {
  const checked = Url.checkSecureUrl(url, allowInsecure)
  return checked._tag === "Secure"
    ? Either.right(checked.href)
    : Either.left(new InsecureTransport({ url: checked.printable }))
}
