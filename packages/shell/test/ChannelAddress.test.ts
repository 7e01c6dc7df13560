import { describe, expect, it } from "vitest"
import { ChannelAddress } from "../src/index.js"

describe("ChannelAddress", () => {
  it("environment: the variables of the channel's address", () => {
    expect(ChannelAddress.environment).toStrictEqual({ wsUrl: "AGENT_SESSION_WS_URL", baseUrl: "AGENT_SESSION_BASE_URL" })
  })

  it("fromBaseUrl: http becomes ws, https becomes wss, the rest kept; the text trimmed", () => {
    expect(ChannelAddress.fromBaseUrl("http://127.0.0.1:8787")).toBe("ws://127.0.0.1:8787")
    expect(ChannelAddress.fromBaseUrl(" https://agents.example.com/base/ ")).toBe("wss://agents.example.com/base/")
    expect(ChannelAddress.fromBaseUrl("HTTPS://a.example")).toBe("wss://a.example")
    // Only a leading scheme is changed.
    expect(ChannelAddress.fromBaseUrl("https://a.example/http://x")).toBe("wss://a.example/http://x")
    expect(ChannelAddress.fromBaseUrl("wss://a.example")).toBe("wss://a.example")
  })

  it("isWebSocketUrl: absolute ws:// and wss:// only", () => {
    expect(["ws://a", "wss://a.example/p", "WSS://A"].map(ChannelAddress.isWebSocketUrl)).toEqual([true, true, true])
    expect(["http://a", "https://a", "a.example", "", "ws:"].map(ChannelAddress.isWebSocketUrl)).toEqual([
      false,
      false,
      false,
      false,
      false
    ])
    expect(ChannelAddress.invalidUrlMessage).toBe("Expected an absolute ws:// or wss:// URL")
  })
})
