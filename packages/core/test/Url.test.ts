import { describe, expect, it } from "vitest"
import { Dialect, Secrets, Url } from "../src/index.js"

describe("Url", () => {
  it("a key goes in clear only to loopback or when allowed; the refused address is printed without secrets", () => {
    expect(Url.checkSecureUrl("wss://x.example/v1", false)).toEqual({ _tag: "Secure", href: "wss://x.example/v1" })
    expect(Url.checkSecureUrl("ws://[::1]:9/v1", false)._tag).toBe("Secure")
    expect(Url.checkSecureUrl("ws://x.example/", true)._tag).toBe("Secure")
    expect(Url.checkSecureUrl("ws://u:p@x.example/v1?apiKey=secret#f", false)).toEqual({
      _tag: "Insecure",
      printable: "ws://x.example/v1"
    })
    expect(Url.checkSecureUrl("ftp://localhost/", true)._tag).toBe("Insecure")
    expect(Url.checkSecureUrl("not a url?apiKey=secret", true)).toEqual({ _tag: "Insecure", printable: "not a url" })
  })

  it("a base URL: absolute http(s), no credentials, query or fragment; trailing slashes dropped", () => {
    expect(Url.checkBaseUrl("https://api.example/v1//", false)).toEqual({ _tag: "Valid", url: "https://api.example/v1" })
    expect(Url.checkBaseUrl("ws://localhost", false)._tag).toBe("Invalid")
    expect(Url.checkBaseUrl("https://api.example/?x=1", false)).toEqual({
      _tag: "Invalid",
      message: "baseUrl: must not carry credentials, a query string or a fragment"
    })
    expect(Url.checkBaseUrl("http://api.example", false)).toEqual({ _tag: "Insecure", printable: "http://api.example/" })
  })

  it("paths join with one slash; the handshake goes in the query unless it is a message (U08)", () => {
    expect(Url.joinPath("http://h/", "/p")).toBe("http://h/p")
    expect(Url.joinPath("http://h", "p")).toBe("http://h/p")
    const base = { base: "ws://h/", path: "/v1/connect", sessionId: "s 1", apiKey: "k&y" }
    expect(Url.connectUrl({ ...base, handshake: "message" })).toBe("ws://h/v1/connect")
    expect(Url.connectUrl({ ...base, handshake: "query" })).toBe("ws://h/v1/connect?sessionId=s+1&apiKey=k%26y")
    expect(Secrets.redactUrl(Url.connectUrl({ ...base, handshake: "both" }))).toBe(
      "ws://h/v1/connect?sessionId=s+1&apiKey=<redacted>"
    )
  })

  it("the dialects' auth headers", () => {
    expect(Dialect.authHeader(Dialect.documented.auth, "k")).toEqual(["authorization", "Bearer k"])
    expect(Dialect.authHeader(Dialect.observed.auth, "k")).toEqual(["x-api-key", "k"])
    expect(Dialect.make({ base: Dialect.observed, name: "mine" })).toEqual({ ...Dialect.observed, name: "mine" })
  })
})

describe("Secrets", () => {
  it("scrub removes known keys, key-named JSON members and bearer tokens", () => {
    const text = `{"apiKey":"abc","token":"t\\"x","note":"my-key here"} Authorization: Bearer xyz.123`
    expect(Secrets.scrub(text, ["my-key"])).toBe(
      `{"apiKey":"<redacted>","token":"<redacted>","note":"<redacted> here"} Authorization: Bearer <redacted>`
    )
    expect(Secrets.scrubChannelText("closed for k1 at wss://h/?token=k2&x=1", "k1")).toBe(
      "closed for <redacted> at wss://h/?token=<redacted>&x=1"
    )
  })

  it("truncateRaw keeps 4 KiB and never splits a surrogate pair", () => {
    expect(Secrets.truncateRaw("x".repeat(5000))).toHaveLength(Secrets.RAW_LIMIT)
    const cut = Secrets.truncateRaw(`${"x".repeat(Secrets.RAW_LIMIT - 1)}😀`)
    expect(cut).toHaveLength(Secrets.RAW_LIMIT - 1)
    expect(Secrets.redactSecrets("aXbXc", ["X", ""])).toBe("a<redacted>b<redacted>c")
  })
})
