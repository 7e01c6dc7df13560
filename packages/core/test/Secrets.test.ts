import { describe, expect, it } from "vitest"
import { Secrets } from "../src/index.js"

describe("Secrets", () => {
  it("redactFields: every field without the key when any holds it; none to change is undefined", () => {
    expect(Secrets.redactFields({ raw: `{"k":"sk-1"}`, message: "bad sk-1" }, "sk-1")).toEqual({
      raw: `{"k":"<redacted>"}`,
      message: "bad <redacted>"
    })
    expect(Secrets.redactFields({ raw: "{}", message: "bad" }, "sk-1")).toBeUndefined()
    expect(Secrets.redactFields({ raw: "anything" }, "")).toBeUndefined()
  })
})
