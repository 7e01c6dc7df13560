/**
 * The whole-SDK layer's options: the transport's variable and values, and the defaults of the
 * dialect, the insecure transport and the transport.
 */
import { describe, expect, it } from "vitest"
import { Dialect } from "effect-agent-session-core"
import { SdkLayer } from "../src/index.js"

describe("SdkLayer", () => {
  it("names the transport's variable and its values, websocket by default", () => {
    expect(SdkLayer.ENV_TRANSPORT).toBe("AGENT_SESSION_TRANSPORT")
    expect(SdkLayer.transports).toEqual(["websocket", "sse"])
    expect(SdkLayer.defaultTransport).toBe("websocket")
  })

  it("defaults: the documented dialect, no insecure transport, a WebSocket", () => {
    expect(SdkLayer.resolve({})).toStrictEqual({ dialect: Dialect.documented, allowInsecure: false, sse: false })
    expect(SdkLayer.resolve({ transport: "websocket" }).sse).toBe(false)
  })

  it("the choices given are kept", () => {
    expect(SdkLayer.resolve({ dialect: Dialect.observed, allowInsecure: true, transport: "sse" })).toStrictEqual({
      dialect: Dialect.observed,
      allowInsecure: true,
      sse: true
    })
    expect(SdkLayer.resolve({ allowInsecure: false }).allowInsecure).toBe(false)
  })
})
