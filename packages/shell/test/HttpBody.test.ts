/**
 * A response body read within its limit (HttpBody): refused, read whole or streamed by what its
 * headers announce; what is kept is never past the limit; the bytes as an ArrayBuffer of their own;
 * a received body decoded when read.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Http } from "effect-agent-session-core"
import { HttpBody } from "../src/index.js"

describe("HttpBody plans", () => {
  it("a body is refused, read whole or streamed by what its headers announce; a success must fit, of any other a prefix is kept", () => {
    expect(HttpBody.bodyPlan(200, { "content-length": "11" }, 10)).toEqual({ _tag: "refuse", size: 11 })
    expect(HttpBody.bodyPlan(299, { "content-length": "11" }, 10)).toEqual({ _tag: "refuse", size: 11 })
    expect(HttpBody.bodyPlan(500, { "content-length": "11" }, 10)).toEqual({ _tag: "stream", truncate: true })
    expect(HttpBody.bodyPlan(300, { "content-length": "11" }, 10)).toEqual({ _tag: "stream", truncate: true })
    expect(HttpBody.bodyPlan(201, { "content-length": " 10 " }, 10)).toEqual({ _tag: "whole", truncate: false })
    expect(HttpBody.bodyPlan(401, { "content-length": "10" }, 10)).toEqual({ _tag: "whole", truncate: true })
    expect(HttpBody.bodyPlan(200, { "content-length": "5", "content-encoding": "gzip" }, 10)).toEqual({ _tag: "stream", truncate: false })
    expect(HttpBody.bodyPlan(200, { "content-length": "5", "content-encoding": "Identity" }, 10)).toEqual({ _tag: "whole", truncate: false })
    expect(HttpBody.bodyPlan(200, { "content-length": "5e1" }, 10)).toEqual({ _tag: "stream", truncate: false })
    expect([HttpBody.limitOf(0), HttpBody.limitOf(Number.NaN, 7), HttpBody.limitOf(3.9)]).toEqual([Http.defaults.maxResponseSize, 7, 3])
  })

  it("a received body is its status and its text, decoded when read", () => {
    const received = HttpBody.receivedBody(201, new TextEncoder().encode(`{"a":"é"}`))
    expect(received.status).toBe(201)
    expect(received.body).toBe(`{"a":"é"}`)
    expect(received.body).toBe(`{"a":"é"}`)
  })
})

describe("Http bodies read within their limit", () => {
  const bytes = (n: number, from = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (from + i) % 256)

  it("a body read whole: kept within the limit, cut when truncating, else over", () => {
    expect(HttpBody.fitBody(bytes(10), 10, false)).toEqual(bytes(10))
    expect(HttpBody.fitBody(bytes(11), 10, true)).toEqual(bytes(10))
    expect(HttpBody.fitBody(bytes(11), 10, false)).toBeUndefined()
  })

  it("a body streamed: what is kept is the prefix of what was sent, never past the limit", () => {
    fc.assert(fc.property(
      fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }),
      fc.integer({ min: 1, max: 100 }),
      fc.boolean(),
      (sizes, limit, truncate) => {
        const body = new HttpBody.BoundedBody(limit, truncate)
        let sent = 0
        let last: "more" | "done" | "over" = "more"
        for (const size of sizes) {
          last = body.push(bytes(size, sent))
          sent += size
          if (last !== "more") break
        }
        if (last === "over") {
          expect(truncate).toBe(false)
          expect(body.size).toBe(sent)
          expect(sent).toBeGreaterThan(limit)
          return
        }
        const kept = body.bytes()
        expect(kept.length).toBe(Math.min(sent, limit))
        expect(kept).toEqual(bytes(kept.length))
        if (last === "done") expect([truncate, kept.length]).toEqual([true, limit])
        // Not truncating, a body of exactly the limit is read on: the next byte would be over it.
        if (!truncate) expect(last).toBe("more")
      }
    ))
  })

  it("a body read by its reader, whichever way its plan says: a success kept whole or over the limit, of any other a prefix", () => {
    fc.assert(fc.property(
      fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }),
      fc.integer({ min: 1, max: 100 }),
      fc.constantFrom(200, 201, 404, 500),
      fc.constantFrom("announced", "encoded", "unannounced"),
      (sizes, limit, status, framing) => {
        const total = sizes.reduce((sum, size) => sum + size, 0)
        const headers: Record<string, string> = framing === "unannounced" ? {} : { "content-length": String(total) }
        if (framing === "encoded") headers["content-encoding"] = "gzip"
        const reader = new HttpBody.BodyReader(status, headers, limit)
        const success = Http.isSuccess(status)
        const read = ((): Uint8Array | HttpBody.OverLimit => {
          switch (reader.plan) {
            case "refuse":
              return reader.refused()
            case "whole":
              return reader.whole(bytes(total))
            case "stream": {
              let sent = 0
              for (const size of sizes) {
                const more = reader.push(bytes(size, sent))
                sent += size
                if (HttpBody.isOverLimit(more)) return more
                if (!more) break
              }
              return reader.bytes()
            }
          }
        })()
        if (success && total > limit) {
          expect(HttpBody.isOverLimit(read)).toBe(true)
          if (HttpBody.isOverLimit(read)) expect(read.size).toBeGreaterThan(limit)
          if (reader.plan === "refuse") expect(read).toEqual({ _tag: "OverLimit", size: total })
          return
        }
        expect(read).toEqual(bytes(Math.min(total, limit)))
        // Announced within the limit and not encoded: read whole, in one call.
        if (framing === "announced" && total <= limit) expect(reader.plan).toBe("whole")
      }
    ))
  })

  it("the bytes as an ArrayBuffer of their own: the backing buffer only when it is exactly theirs", () => {
    const whole = bytes(4)
    expect(HttpBody.ownArrayBuffer(whole)).toBe(whole.buffer)
    const part = whole.subarray(1, 3)
    const own = HttpBody.ownArrayBuffer(part)
    expect(own).not.toBe(whole.buffer)
    expect(new Uint8Array(own)).toEqual(bytes(2, 1))
  })
})
