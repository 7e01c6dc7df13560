import { describe, expect, it } from "vitest"
import { Dialect } from "../src/index.js"

describe("Dialect", () => {
  it("documented follows service-interface.md", () => {
    expect(Dialect.documented).toStrictEqual({
      name: "documented",
      auth: "bearer",
      onboardPath: "/agent/onboard",
      sessionsPath: "/api/v1sessions",
      createSessionBody: "documented",
      sessionResponse: "flat",
      retrieve: false,
      connectPath: "/v1/connect",
      handshake: "message",
      framing: "event-data",
      answerKey: "event",
      heartbeats: false,
      costSummary: false,
      replaysOnReconnect: false,
      sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
    })
  })

  it("observed follows the service's own client (observed-dialect.md)", () => {
    expect(Dialect.observed).toStrictEqual({
      name: "observed",
      auth: "x-api-key",
      onboardPath: "/agent/onboard",
      sessionsPath: "/api/v1/sessions",
      createSessionBody: "observed",
      sessionResponse: "data-envelope",
      retrieve: true,
      connectPath: "/v1/connect",
      handshake: "query",
      framing: "event-data",
      answerKey: "type",
      heartbeats: true,
      costSummary: true,
      replaysOnReconnect: false,
      sse: { connectPath: "/events/v1/connect", egressPath: "/events/v1/egress" }
    })
  })

  it("the two dialects differ exactly where the documents differ", () => {
    const differing = (Object.keys(Dialect.documented) as Array<keyof Dialect.Dialect>)
      .filter((key) => JSON.stringify(Dialect.documented[key]) !== JSON.stringify(Dialect.observed[key]))
      .sort()
    expect(differing).toEqual([
      "answerKey",
      "auth",
      "costSummary",
      "createSessionBody",
      "handshake",
      "heartbeats",
      "name",
      "retrieve",
      "sessionResponse",
      "sessionsPath"
    ])
  })

  it("U08 make overrides the documented dialect by default", () => {
    const mine = Dialect.make({ name: "mine", handshake: "both", framing: "flat" })
    expect(mine).toStrictEqual({ ...Dialect.documented, name: "mine", handshake: "both", framing: "flat" })
    // The base is not changed.
    expect(Dialect.documented.handshake).toBe("message")
    expect(Dialect.documented.name).toBe("documented")
  })

  it("U09 make overrides another base, and the base key is not kept", () => {
    const mixed = Dialect.make({ base: Dialect.observed, name: "observed-typed", framing: "type-data", auth: "bearer" })
    expect(mixed).toStrictEqual({ ...Dialect.observed, name: "observed-typed", framing: "type-data", auth: "bearer" })
    expect(mixed).not.toHaveProperty("base")
    expect(mixed.sessionsPath).toBe("/api/v1/sessions")
  })

  it("U23 make changes paths: base URLs and paths are options", () => {
    const moved = Dialect.make({ sessionsPath: "/api/v2/sessions", connectPath: "/v2/connect" })
    expect(moved.sessionsPath).toBe("/api/v2/sessions")
    expect(moved.connectPath).toBe("/v2/connect")
    expect(moved.onboardPath).toBe("/agent/onboard")
  })

  it("make with no choices is a copy of the documented dialect", () => {
    const copy = Dialect.make({})
    expect(copy).toStrictEqual(Dialect.documented)
    expect(copy).not.toBe(Dialect.documented)
  })

  it("fromName gives each dialect by name", () => {
    expect(Dialect.fromName("documented")).toBe(Dialect.documented)
    expect(Dialect.fromName("observed")).toBe(Dialect.observed)
  })
})
