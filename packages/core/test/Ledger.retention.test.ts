/**
 * Issue 36 item 6: what the answer ledger remembers for the connection's life must not hold the
 * frames its keys came from. V8 keeps a slice of a string (and a concatenation) as a view of its
 * parent: a bounded key cut from a 256 KiB action session id kept the whole id alive, and 600
 * such requests held 150 MiB. Measured here as the live heap after full collections (`gc` is
 * reached without `--expose-gc`, as test/reliability/helpers.ts does), ids made as the decoder
 * makes them: by `JSON.parse` of each request's frame, then dropped.
 */
import V8 from "node:v8"
import Vm from "node:vm"
import { describe, expect, it } from "vitest"
import { Ledger } from "../src/index.js"

const gc: () => void = (() => {
  V8.setFlagsFromString("--expose-gc")
  const fn: unknown = Vm.runInNewContext("gc")
  return typeof fn === "function" ? () => void fn() : () => {}
})()

/** The heap in use after full collections, in MiB. */
const liveHeap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / (1024 * 1024)
}

const ID_SIZE = 256 * 1024
const REQUESTS = 300

/** The action session id of the `i`-th request, as decoding its frame gives it: a string of its own. */
const decodedId = (i: number): string => {
  const frame = `{"event":"external_resource_requested","data":{"action_session_id":"${"a".repeat(ID_SIZE)}-${i}","resource_type":"otp"}}`
  return (JSON.parse(frame) as { data: { action_session_id: string } }).data.action_session_id
}

describe("Ledger: keys do not retain the frames they came from (issue 36 item 6)", () => {
  it(`${REQUESTS} requests with ${ID_SIZE / 1024} KiB ids, answered and remembered: the heap grows < 20 MiB, not 75`, () => {
    const before = liveHeap()
    const ledger = new Ledger.Ledger()
    for (let i = 0; i < REQUESTS; i++) {
      const key = Ledger.requestKey(decodedId(i), "otp")
      ledger.event(key)
      expect(ledger.queue({ key, frame: "", data: { granted: true, resource_type: "otp" } }, 16)).toBeUndefined()
      ledger.wrote("confirmed")
    }
    const grown = liveHeap() - before
    // All remembered (answered: asked again, each is new), each by a key of bounded length.
    expect(ledger.requests.size).toBe(REQUESTS)
    for (const [key, status] of ledger.requests) {
      expect(status).toBe("sent")
      expect(key.length).toBeLessThanOrEqual(Ledger.MAX_KEY_LENGTH)
    }
    expect(grown, `the live heap grew by ${grown.toFixed(1)} MiB`).toBeLessThan(20)
  })

  it(`${REQUESTS} pending requests with short ids cut from 256 KiB strings: the heap grows < 20 MiB`, () => {
    const before = liveHeap()
    const ledger = new Ledger.Ledger()
    for (let i = 0; i < REQUESTS; i++) {
      // A short id that is a view of a long string (as a slice of a frame would be).
      const id = decodedId(i).slice(ID_SIZE - 40)
      ledger.received(Ledger.requestKey(id, "otp"))
    }
    const grown = liveHeap() - before
    expect(ledger.requests.size).toBe(REQUESTS)
    expect(ledger.status(Ledger.requestKey(decodedId(7).slice(ID_SIZE - 40), "otp"))).toBe("pending")
    expect(grown, `the live heap grew by ${grown.toFixed(1)} MiB`).toBeLessThan(20)
  })
})
