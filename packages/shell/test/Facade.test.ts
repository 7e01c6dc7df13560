import { describe, expect, it } from "vitest"
import type { Session } from "effect-agent-session-core"
import { Facade } from "../src/index.js"

/** A test event: its wire name and, for an error, its text; for `complete`, its cost. */
interface Ev {
  readonly name: string
  readonly text?: string
  readonly cost?: number
}

const classifier: Session.Classifier<Ev> = {
  wireName: (event) => event.name,
  actionSessionId: () => "a",
  resourceType: () => "request_user_input",
  errorText: (event) => event.text ?? "",
  cost: (complete) => complete.cost
}

type Outcome = { readonly actions: number; readonly cost: number | undefined; readonly overrunAt: number | undefined }
type Failure = { readonly _tag: "Overrun"; readonly actions: number } | {
  readonly _tag: "WithoutComplete"
  readonly lastError: string | undefined
} | { readonly _tag: "Connection" }

const make = (options: Partial<Session.Options> = {}) =>
  new Facade.Guard<Ev, Ev, Ev, Outcome, Failure>({ maxActions: 2, ...options }, classifier, {
    outcome: ({ actions, cost, overrunAt }) => ({ actions, cost, overrunAt }),
    overrun: (actions) => ({ _tag: "Overrun", actions }),
    withoutComplete: (lastError) => ({ _tag: "WithoutComplete", lastError })
  })

const action: Ev = { name: "action_run" }
const complete: Ev = { name: "complete", cost: 3 }

describe("Facade", () => {
  it("consume: true the first time only", () => {
    const guard = make()
    expect([guard.consume(), guard.consume(), guard.consume()]).toEqual([true, false, false])
  })

  it("completed: none before complete, then the outcome built from the core's", () => {
    const guard = make()
    guard.watched.received([action])
    expect(guard.completed()).toBeUndefined()
    guard.watched.received([action, complete])
    expect(guard.completed()).toEqual({ actions: 2, cost: 3, overrunAt: undefined })
  })

  it("ended: nothing after complete; the end before complete carries the last error's text", () => {
    const done = make()
    done.watched.received([complete])
    expect(done.ended()).toBeUndefined()
    expect(done.failedWith).toBeUndefined()

    const cut = make()
    cut.watched.received([{ name: "error", text: "boom" }, { name: "started" }])
    expect(cut.ended()).toEqual({ _tag: "WithoutComplete", lastError: "boom" })
    expect(cut.failedWith).toEqual({ _tag: "WithoutComplete", lastError: "boom" })
  })

  it("ended: the budget's stop comes before complete (fail mode)", () => {
    const guard = make({ maxActions: 1 })
    const received = guard.watched.received([action, action, complete])
    expect(received.overrun).toBe(2)
    expect(guard.ended()).toEqual({ _tag: "Overrun", actions: 2 })
    expect(guard.settle(true)).toEqual({ _tag: "Failure", error: { _tag: "Overrun", actions: 2 } })
  })

  it("overran: the failure at the stop, recorded", () => {
    const guard = make({ maxActions: 0 })
    guard.watched.received([action])
    expect(guard.overran(guard.watched.stoppedAt ?? -1)).toEqual({ _tag: "Overrun", actions: 1 })
    expect(guard.failedWith).toEqual({ _tag: "Overrun", actions: 1 })
  })

  it("settle: the events' own failure is the outcome's only when they failed", () => {
    const guard = make()
    guard.watched.received([action])
    guard.failed({ _tag: "Connection" })
    expect(guard.settle(true)).toEqual({ _tag: "Failure", error: { _tag: "Connection" } })
    // Ended by the consumer (its own failure, an interruption), or a success: not the connection's.
    expect(guard.settle(false)).toEqual({ _tag: "Failure", error: { _tag: "WithoutComplete", lastError: undefined } })
  })

  it("settle: a failure of no error of the events' own gives the complete received, else the end without it", () => {
    const guard = make()
    guard.failed(undefined)
    expect(guard.settle(true)).toEqual({ _tag: "Failure", error: { _tag: "WithoutComplete", lastError: undefined } })
    guard.watched.received([action, complete])
    expect(guard.settle(true)).toEqual({ _tag: "Success", value: { actions: 1, cost: 3, overrunAt: undefined } })
  })

  it("settle: in report mode the overrun is kept on the outcome", () => {
    const guard = make({ maxActions: 1, onBudgetExceeded: "report" })
    guard.watched.received([action, action, action, complete])
    expect(guard.ended()).toBeUndefined()
    expect(guard.settle(false)).toEqual({ _tag: "Success", value: { actions: 3, cost: 3, overrunAt: 2 } })
  })

  it("createOptions: the idempotency key only when one is given", () => {
    expect(Facade.createOptions({ agent: "x" })).toStrictEqual({ agent: "x" })
    expect(Facade.createOptions({})).toStrictEqual({ agent: undefined })
    expect(Facade.createOptions({ agent: "x", idempotencyKey: "k" })).toStrictEqual({ agent: "x", idempotencyKey: "k" })
    expect("idempotencyKey" in Facade.createOptions({ idempotencyKey: undefined })).toBe(false)
  })
})
