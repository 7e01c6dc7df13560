import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Ledger, Session } from "../src/index.js"

/** A test event: its wire name and, for a request, its id and type; for an error, its text. */
interface Ev {
  readonly name: string
  readonly id?: string
  readonly type?: string
  readonly text?: string
  readonly cost?: number
}

const classifier: Session.Classifier<Ev> = {
  wireName: (event) => event.name,
  actionSessionId: (request) => request.id ?? "",
  resourceType: (request) => request.type ?? "request_user_input",
  errorText: (event) => event.text ?? "",
  cost: (complete) => complete.cost
}
const watch = (options: Session.Options) => new Session.Watched<Ev>(options, classifier)

const action: Ev = { name: "action_run" }
const request = (id: string, type = "request_user_input"): Ev => ({ name: "external_resource_requested", id, type })

describe("Session", () => {
  it("keptEvents: a number keeps the last n, true every event, false none, none given 100", () => {
    expect([undefined, true, false, 3.7, -2, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(Session.keptEvents))
      .toEqual([100, Number.POSITIVE_INFINITY, 0, 3, 0, Number.POSITIVE_INFINITY, 0])
  })

  it("kindOf: the kinds by wire name; an unknown name is an event", () => {
    expect(
      ["heartbeat", "connected", "external_resource_requested", "complete", "error", "action_run", "started", "x"].map(
        Session.kindOf
      )
    ).toEqual(["keep-alive", "keep-alive", "request", "complete", "error", "chargeable", "event", "event"])
  })

  it("the budget (U20), fail mode: the chunk is cut after the overrun, nothing is received after it", () => {
    const watched = watch({ maxActions: 2 })
    expect(watched.received([action, action, { name: "started" }])).toEqual({
      delivered: 3,
      requests: 0,
      completed: false,
      overrun: undefined
    })
    expect(watched.received([action, action, { name: "complete" }]).overrun).toBe(3)
    expect(watched.received([action, action]).delivered).toBe(0)
    expect([watched.actions, watched.overrunAt, watched.ended()]).toEqual([3, 3, { _tag: "Overrun", actions: 3 }])
  })

  it("the budget (U20), report mode: the first overrun is kept, the session goes on to complete", () => {
    const watched = watch({ maxActions: 1, onBudgetExceeded: "report", keepEvents: 2 })
    const step = watched.received([action, action, action, { name: "complete", cost: 0.5 }, action])
    expect(step).toEqual({ delivered: 5, requests: 0, completed: true, overrun: undefined })
    expect(watched.completed).toEqual({
      _tag: "Completed",
      complete: { name: "complete", cost: 0.5 },
      cost: 0.5,
      actions: 3,
      events: [action, { name: "complete", cost: 0.5 }],
      overrunAt: 2
    })
    // The outcome stands as `complete` found it; only the first `complete` settles it.
    expect(watched.received([{ name: "complete", cost: 9 }]).completed).toBe(false)
    expect(watched.ended()).toBe(watched.completed)
    expect(watched.actions).toBe(4)
  })

  it("an end before complete (U17) carries the last error's text", () => {
    const watched = watch({ maxActions: 5 })
    watched.received([{ name: "error", text: "a" }, { name: "error", text: "b" }, { name: "heartbeat" }])
    expect(watched.ended()).toEqual({ _tag: "WithoutComplete", lastError: "b" })
  })

  it("the tail kept is the last `keep` events in arrival order, whatever their number (property)", () => {
    fc.assert(fc.property(fc.array(fc.nat(3), { maxLength: 500 }), fc.nat(40), (names, keep) => {
      const events = names.map((n) => ({ name: ["started", "heartbeat", "thoughts_and_memories", "x"][n]! }))
      const watched = watch({ maxActions: 0, keepEvents: keep })
      watched.received(events.slice(0, 200))
      watched.received(events.slice(200))
      expect(watched.events()).toEqual(keep === 0 ? [] : events.slice(-keep))
    }))
  })

  it("pending: a request replaces one of the same key, answered removes it, closed empties the list", () => {
    const watched = watch({ maxActions: 1 })
    expect(watched.received([request("a"), request("b"), request("a", "admin_permission_request")]).requests).toBe(3)
    expect(watched.pending).toEqual([])
    watched.arrivedAt(1)
    watched.received([request("a")])
    expect(watched.arrivedAt(5).map((w) => [w.request.id, w.request.type, w.since])).toEqual([
      ["b", "request_user_input", 1],
      ["a", "admin_permission_request", 1],
      ["a", "request_user_input", 5]
    ])
    expect(watched.answered(request("b"))).toBe(true)
    expect(watched.answered(request("b"))).toBe(false)
    expect(watched.pending.map((w) => w.request.id)).toEqual(["a", "a"])
    watched.closed()
    expect(watched.pending).toEqual([])
  })

  it("pending: keyed by the ledger's key, so a 256 KiB id is held by a bounded key", () => {
    const watched = watch({ maxActions: 1 })
    const long = "x".repeat(256 * 1024)
    watched.received([request(long), request(long)])
    expect(watched.arrivedAt(0)).toHaveLength(1)
    expect(watched.keyOf(request(long)).length).toBeLessThanOrEqual(Ledger.MAX_KEY_LENGTH)
    expect(watched.answered(request(long))).toBe(true)
  })

  it("pending: at most Ledger.MAX_REQUESTS, the oldest going first", () => {
    const watched = watch({ maxActions: 1 })
    watched.received(Array.from({ length: Ledger.MAX_REQUESTS + 3 }, (_, i) => request(String(i))))
    const listed = watched.arrivedAt(0)
    expect(listed).toHaveLength(Ledger.MAX_REQUESTS)
    expect(listed[0]!.request.id).toBe("3")
  })

  it("warnings: due warnAfter after arrival, each given once; none when infinite", () => {
    const watched = watch({ maxActions: 1, warnAfterMillis: 100 })
    expect(watched.nextWarningAt()).toBeUndefined()
    watched.received([request("a")])
    watched.arrivedAt(10)
    watched.received([request("b", "otp")])
    watched.arrivedAt(50)
    expect(watched.nextWarningAt()).toBe(110)
    expect(watched.warningsDue(109)).toEqual([])
    expect(watched.warningsDue(160)).toEqual([
      { request: request("a"), resourceType: "request_user_input", waitedMillis: 150 },
      { request: request("b", "otp"), resourceType: "otp", waitedMillis: 110 }
    ])
    expect([watched.nextWarningAt(), watched.warningsDue(1_000)]).toEqual([undefined, []])
    // Arriving again replaces the request: its warning is due again.
    watched.received([request("a")])
    watched.arrivedAt(200)
    expect(watched.nextWarningAt()).toBe(300)
    const never = watch({ maxActions: 1, warnAfterMillis: Number.POSITIVE_INFINITY })
    never.received([request("a")])
    never.arrivedAt(0)
    expect([never.nextWarningAt(), never.warningsDue(Number.MAX_SAFE_INTEGER)]).toEqual([undefined, []])
    expect(Session.warningText("30s", "otp")).toBe(
      "The agent has waited 30s for an answer to its otp request: answer it with respond (RunningSession.pending lists it)"
    )
  })

  // ---------------------------------------------------------------------------
  // Against a model: a list of the steps, the rules written out the plain way
  // ---------------------------------------------------------------------------

  type Op =
    | { readonly _tag: "chunk"; readonly events: ReadonlyArray<Ev> }
    | { readonly _tag: "answer"; readonly id: string }
    | { readonly _tag: "tick"; readonly by: number }

  const ids = fc.constantFrom("a", "b", "c")
  const event: fc.Arbitrary<Ev> = fc.oneof(
    fc.constant(action),
    fc.constant({ name: "heartbeat" }),
    fc.constant({ name: "started" }),
    ids.map((id) => request(id)),
    fc.string({ maxLength: 3 }).map((text) => ({ name: "error", text })),
    fc.nat(10).map((cost) => ({ name: "complete", cost }))
  )
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.array(event, { maxLength: 6 }).map((events) => ({ _tag: "chunk" as const, events })),
    ids.map((id) => ({ _tag: "answer" as const, id })),
    fc.nat(80).map((by) => ({ _tag: "tick" as const, by }))
  )

  it("agrees with a model: budget, outcome, pending and warnings (property)", () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 40 }),
        fc.nat(6),
        fc.boolean(),
        fc.nat(5),
        (ops, maxActions, report, keep) => {
          const warnAfter = 50
          const watched = watch({
            maxActions,
            keepEvents: keep,
            onBudgetExceeded: report ? "report" : "fail",
            warnAfterMillis: warnAfter
          })
          // The model.
          let now = 0
          let actions = 0
          let overrunAt: number | undefined
          let stopped: number | undefined
          let lastError: string | undefined
          let completed: { complete: Ev; actions: number; events: Array<Ev>; overrunAt: number | undefined } | undefined
          const seen: Array<Ev> = []
          let pending: Array<{ id: string; since: number; warned: boolean }> = []
          for (const o of ops) {
            if (o._tag === "tick") {
              now += o.by
              const due = pending.filter((p) => !p.warned && p.since + warnAfter <= now)
              expect(watched.warningsDue(now).map((w) => [w.request.id, w.waitedMillis]))
                .toEqual(due.map((p) => [p.id, now - p.since]))
              for (const p of due) p.warned = true
            } else if (o._tag === "answer") {
              const before = pending.length
              pending = pending.filter((p) => p.id !== o.id)
              expect(watched.answered(request(o.id))).toBe(pending.length < before)
            } else {
              let delivered = 0
              let requests = 0
              let first = false
              let overrun: number | undefined
              if (stopped === undefined) {
                for (const e of o.events) {
                  delivered += 1
                  seen.push(e)
                  if (e.name === "action_run") {
                    actions += 1
                    if (actions > maxActions) {
                      overrunAt ??= actions
                      if (!report) {
                        stopped = overrun = actions
                        break
                      }
                    }
                  } else if (e.name === "external_resource_requested") {
                    requests += 1
                    pending = [...pending.filter((p) => p.id !== e.id), { id: e.id!, since: now, warned: false }]
                  } else if (e.name === "error") {
                    lastError = e.text
                  } else if (e.name === "complete" && completed === undefined) {
                    first = true
                    completed = { complete: e, actions, events: keep === 0 ? [] : seen.slice(-keep), overrunAt }
                  }
                }
              }
              expect(watched.received(o.events)).toEqual({ delivered, requests, completed: first, overrun })
              if (requests > 0) watched.arrivedAt(now)
            }
            expect(watched.pending.map((w) => [w.request.id, w.since])).toEqual(pending.map((p) => [p.id, p.since]))
            const unwarned = pending.filter((p) => !p.warned).map((p) => p.since + warnAfter)
            expect(watched.nextWarningAt()).toBe(unwarned.length === 0 ? undefined : Math.min(...unwarned))
          }
          expect([watched.actions, watched.overrunAt, watched.lastError]).toEqual([actions, overrunAt, lastError])
          expect(watched.ended()).toEqual(
            stopped !== undefined
              ? { _tag: "Overrun", actions: stopped }
              : completed !== undefined
              ? { _tag: "Completed", cost: completed.complete.cost, ...completed }
              : { _tag: "WithoutComplete", lastError }
          )
        }
      ),
      { numRuns: 300 }
    )
  })
})
