/**
 * The answer ledger (packages/core/src/Ledger.ts) by property tests: random runs of its
 * transitions keep its invariants, agree with a reference transcribed from the rules, and lose no
 * answer; then each rule alone.
 */
import * as FastCheck from "fast-check"
import { assert, describe, it } from "vitest"
import { Ledger } from "../src/index.js"

// ---------------------------------------------------------------------------
// The reference: the engine's answer state, transcribed as plain mutable state.
// ---------------------------------------------------------------------------

class Reference {
  readonly requests = new Map<string, Ledger.Status>()
  outbox: Array<Ledger.QueuedAnswer> = []
  unconfirmed: Array<Ledger.QueuedAnswer> = []
  constructor(pending: ReadonlyArray<string>) {
    for (const key of pending) this.requests.set(key, "pending")
  }
  event(key: string | undefined): void {
    if (this.unconfirmed.length > 0) this.confirm()
    if (key !== undefined) {
      const status = this.requests.get(key)
      if (status !== "queued" && status !== "unconfirmed") this.requests.set(key, "pending")
    }
  }
  confirm(): void {
    for (const answer of this.unconfirmed) {
      if (this.requests.get(answer.key) === "unconfirmed") this.requests.set(answer.key, "sent")
    }
    this.unconfirmed = []
  }
  respond(answer: Ledger.QueuedAnswer, limit: number): Ledger.Refusal | undefined {
    const status = this.requests.get(answer.key)
    if (status === undefined) return "never-received"
    if (status !== "pending") return "already-answered"
    if (this.outbox.length >= limit) return "full"
    this.requests.set(answer.key, "queued")
    this.outbox.push(answer)
    return undefined
  }
  written(how: "confirmed" | "written"): void {
    const head = this.outbox.shift()
    if (head === undefined) return
    if (how === "confirmed") {
      this.requests.set(head.key, "sent")
    } else {
      this.unconfirmed.push(head)
      this.requests.set(head.key, "unconfirmed")
    }
  }
  refused(): void {
    const head = this.outbox.shift()
    if (head !== undefined) this.requests.set(head.key, "pending")
  }
  requeue(): number {
    const count = this.unconfirmed.length
    for (const answer of this.unconfirmed) this.requests.set(answer.key, "queued")
    this.outbox.unshift(...this.unconfirmed)
    this.unconfirmed = []
    return count
  }
  finish(clean: boolean): Array<{ actionSessionId: string; resourceType: string }> {
    if (clean) this.confirm()
    return [...this.unconfirmed, ...this.outbox].map((answer) => {
      const cut = answer.key.indexOf("\u0000")
      return { actionSessionId: answer.key.slice(0, cut), resourceType: answer.key.slice(cut + 1) }
    })
  }
}

// ---------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------

/** Few keys, so that requests repeat and answers collide. */
const keys = ["as_1", "as_2", "as_3"].flatMap((session) =>
  ["browser_use", "form_input"].map((type) => Ledger.requestKey(session, type))
)
const keyArb = FastCheck.constantFrom(...keys)

type Op =
  | { readonly _tag: "Request"; readonly key: string }
  | { readonly _tag: "Event" }
  | { readonly _tag: "Respond"; readonly key: string }
  | { readonly _tag: "Written"; readonly how: "confirmed" | "written" }
  | { readonly _tag: "Retry" }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "Drop" }

const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { arbitrary: keyArb.map((key): Op => ({ _tag: "Request", key })), weight: 3 },
  { arbitrary: FastCheck.constant<Op>({ _tag: "Event" }), weight: 1 },
  { arbitrary: keyArb.map((key): Op => ({ _tag: "Respond", key })), weight: 4 },
  { arbitrary: FastCheck.constantFrom<Op>({ _tag: "Written", how: "confirmed" }, { _tag: "Written", how: "written" }), weight: 3 },
  { arbitrary: FastCheck.constant<Op>({ _tag: "Retry" }), weight: 1 },
  { arbitrary: FastCheck.constant<Op>({ _tag: "Refused" }), weight: 1 },
  { arbitrary: FastCheck.constant<Op>({ _tag: "Drop" }), weight: 2 }
)

/** Long enough runs (the default size stays under ten steps) to reach a full outbox and mixed drops. */
const opsArb = FastCheck.array(opArb, { minLength: 10, maxLength: 80, size: "max" })

const answerFor = (key: string, n: number): Ledger.QueuedAnswer => ({
  key,
  frame: `answer-${n}`,
  data: { granted: n % 2 === 0, resource_type: Ledger.keyParts(key).resourceType }
})

const inFlight = (ledger: Ledger.Ledger): ReadonlyArray<Ledger.QueuedAnswer> => [...ledger.unconfirmed, ...ledger.outbox]
const order = (answer: Ledger.QueuedAnswer): number => Number(answer.frame.slice("answer-".length))
const sorted = <A>(entries: Iterable<readonly [string, A]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** The invariants that hold after every step, and agreement with the reference. */
const check = (ledger: Ledger.Ledger, reference: Reference): void => {
  for (const answer of ledger.outbox) assert.strictEqual(ledger.status(answer.key), "queued")
  for (const answer of ledger.unconfirmed) assert.strictEqual(ledger.status(answer.key), "unconfirmed")
  const waiting = inFlight(ledger)
  assert.strictEqual(new Set(waiting.map((answer) => answer.key)).size, waiting.length, "a key twice on its way")
  // And the other way round: a queued or unconfirmed request has its answer on its way.
  const waitingStatuses = [...ledger.requests.values()].filter((status) => status === "queued" || status === "unconfirmed")
  assert.strictEqual(waitingStatuses.length, waiting.length)
  // FIFO: the unconfirmed, then the outbox, in the order the answers were accepted.
  for (let i = 1; i < waiting.length; i++) assert.isBelow(order(waiting[i - 1]!), order(waiting[i]!))
  assert.strictEqual(ledger.hasUnconfirmed, ledger.unconfirmed.length > 0)
  assert.strictEqual(ledger.head(), ledger.outbox[0])
  assert.deepStrictEqual(sorted(ledger.requests), sorted(reference.requests))
  assert.deepStrictEqual(ledger.outbox, reference.outbox)
  assert.deepStrictEqual(ledger.unconfirmed, reference.unconfirmed)
}

describe("answer ledger", () => {
  it("random operations keep the invariants, agree with the engine's rules, and lose no answer", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.subarray(keys, { maxLength: 2 }),
      FastCheck.integer({ min: 1, max: 4 }),
      opsArb,
      FastCheck.boolean(),
      (pending, limit, ops, clean) => {
      const ledger = new Ledger.Ledger(pending)
      const reference = new Reference(pending)
      /** What became of each accepted answer (by frame): exactly one fate each. */
      const fates = new Map<string, "sent" | "pending again" | "unsent">()
      const settle = (answers: ReadonlyArray<Ledger.QueuedAnswer>, fate: "sent" | "pending again" | "unsent") => {
        for (const answer of answers) {
          assert.isFalse(fates.has(answer.frame), `${answer.frame} settled twice`)
          fates.set(answer.frame, fate)
        }
      }
      let accepted = 0
      /** Answers put back by a drop: only they may take the outbox past the limit. */
      const requeued = new Set<string>()
      check(ledger, reference)
      for (const op of ops) {
        const before = [...inFlight(ledger)]
        let arrived: ReadonlyArray<Ledger.QueuedAnswer> = []
        let fate: "sent" | "pending again" | undefined
        switch (op._tag) {
          case "Request":
          case "Event": {
            const key = op._tag === "Request" ? op.key : undefined
            if (op._tag === "Request") assert.strictEqual(ledger.isAnswered(op.key), reference.requests.get(op.key) === "sent")
            ledger.event(key)
            reference.event(key)
            fate = "sent"
            break
          }
          case "Respond": {
            const answer = answerFor(op.key, accepted)
            const refusal = ledger.queue(answer, limit)
            const expected = reference.respond(answer, limit)
            if (refusal !== undefined) {
              assert.strictEqual(refusal, expected)
            } else {
              assert.isUndefined(expected)
              assert.isAtMost(ledger.outbox.length, limit)
              arrived = [answer]
              accepted += 1
            }
            break
          }
          case "Written":
            ledger.wrote(op.how)
            reference.written(op.how)
            fate = "sent"
            break
          case "Retry":
            // A write to be retried: no transition, the answer stays at the head.
            break
          case "Refused":
            ledger.refused()
            reference.refused()
            fate = "pending again"
            break
          case "Drop": {
            const count = ledger.unconfirmed.length
            for (const answer of ledger.unconfirmed) requeued.add(answer.frame)
            assert.strictEqual(ledger.requeue(), count)
            assert.strictEqual(count, reference.requeue())
            break
          }
        }
        check(ledger, reference)
        assert.isAtMost(ledger.outbox.filter((answer) => !requeued.has(answer.frame)).length, limit)
        const after = new Set(inFlight(ledger).map((answer) => answer.frame))
        const gone = before.filter((answer) => !after.has(answer.frame))
        assert.deepStrictEqual(
          inFlight(ledger).filter((answer) => !before.includes(answer)),
          arrived,
          "only an accepted answer arrives"
        )
        if (gone.length > 0) {
          assert.isDefined(fate, `${op._tag} lost an answer`)
          if (fate !== undefined) settle(gone, fate)
        }
      }
      if (clean) settle(ledger.unconfirmed, "sent")
      const left = clean ? [...ledger.outbox] : [...inFlight(ledger)]
      const unsent = ledger.close(clean)
      assert.deepStrictEqual(unsent, reference.finish(clean))
      assert.deepStrictEqual(unsent, left.map((answer) => Ledger.keyParts(answer.key)))
      settle(left, "unsent")
      assert.strictEqual(fates.size, accepted, "every accepted answer ends sent, pending again or unsent")
      assert.deepStrictEqual([ledger.requests.size, ledger.outbox.length, ledger.unconfirmed.length], [0, 0, 0])
      }
    ), { numRuns: 500 })
  })

  it("the generated runs reach every case: a full outbox, a drop with answers both written and queued, a requeue past the limit, a refused head, a request asked again once sent", () => {
    const reached = new Set<string>()
    for (const [limit, ops] of FastCheck.sample(FastCheck.tuple(FastCheck.integer({ min: 1, max: 4 }), opsArb), { numRuns: 500, seed: 15 })) {
      const ledger = new Ledger.Ledger()
      ops.forEach((op, n) => {
        if (op._tag === "Request") {
          if (ledger.isAnswered(op.key)) reached.add("asked again")
          ledger.event(op.key)
        } else if (op._tag === "Respond") {
          if (ledger.queue(answerFor(op.key, n), limit) === "full") reached.add("full")
        } else if (op._tag === "Written") {
          ledger.wrote(op.how)
        } else if (op._tag === "Refused") {
          if (ledger.outbox.length > 0) reached.add("refused")
          ledger.refused()
        } else if (op._tag === "Drop") {
          if (ledger.unconfirmed.length > 0 && ledger.outbox.length > 0) reached.add("mixed drop")
          ledger.requeue()
          if (ledger.outbox.length > limit) reached.add("past the limit")
        }
      })
    }
    assert.deepStrictEqual([...reached].sort(), ["asked again", "full", "mixed drop", "past the limit", "refused"])
  })

  const key = Ledger.requestKey("as_1", "browser_use")
  const other = Ledger.requestKey("as_2", "browser_use")
  /** A ledger that received `keys`. */
  const received = (...keys: ReadonlyArray<string>): Ledger.Ledger => {
    const ledger = new Ledger.Ledger()
    for (const k of keys) ledger.received(k)
    return ledger
  }
  const queued = (ledger: Ledger.Ledger, answer: Ledger.QueuedAnswer, limit = 8): Ledger.Ledger => {
    const refusal = ledger.queue(answer, limit)
    if (refusal !== undefined) return assert.fail(`refused: ${refusal}`)
    return ledger
  }
  const frames = (answers: ReadonlyArray<Ledger.QueuedAnswer>) => answers.map((answer) => answer.frame)

  it("U16 refuses an answer to a request never received", () => {
    assert.strictEqual(new Ledger.Ledger().queue(answerFor(key, 0), 8), "never-received")
    assert.strictEqual(received(Ledger.requestKey("as_1", "form_input")).queue(answerFor(key, 0), 8), "never-received")
  })

  it("U16 refuses a second answer while the first is queued, unconfirmed or sent", () => {
    const ledger = queued(received(key), answerFor(key, 0))
    assert.strictEqual(ledger.queue(answerFor(key, 1), 8), "already-answered")
    ledger.wrote("written")
    assert.strictEqual(ledger.queue(answerFor(key, 1), 8), "already-answered")
    ledger.confirm()
    assert.strictEqual(ledger.queue(answerFor(key, 1), 8), "already-answered")
  })

  it("refuses an answer when the outbox holds the limit, and accepts it once the head is written", () => {
    const full = queued(received(key, other), answerFor(key, 0), 1)
    assert.strictEqual(full.queue(answerFor(other, 1), 1), "full")
    full.wrote("written")
    assert.strictEqual(queued(full, answerFor(other, 1), 1).outbox.length, 1)
  })

  it("a requeue may take the outbox past the limit: nothing written is dropped, queue refuses until below", () => {
    const ledger = queued(received(key, other), answerFor(key, 0), 1)
    ledger.wrote("written")
    queued(ledger, answerFor(other, 1), 1)
    assert.strictEqual(ledger.requeue(), 1)
    assert.deepStrictEqual(frames(ledger.outbox), ["answer-0", "answer-1"])
    const third = Ledger.requestKey("as_3", "browser_use")
    ledger.received(third)
    assert.strictEqual(ledger.queue(answerFor(third, 2), 1), "full")
  })

  it("a request asked again while its answer is queued or unconfirmed keeps it; once sent it is pending again", () => {
    const ledger = queued(received(key), answerFor(key, 0))
    ledger.received(key)
    assert.strictEqual(ledger.status(key), "queued")
    ledger.wrote("written")
    ledger.received(key)
    assert.strictEqual(ledger.status(key), "unconfirmed")
    assert.isFalse(ledger.isAnswered(key))
    const sent = queued(received(key), answerFor(key, 0))
    sent.wrote("confirmed")
    assert.isTrue(sent.isAnswered(key))
    sent.received(key)
    assert.strictEqual(sent.status(key), "pending")
    assert.strictEqual(queued(sent, answerFor(key, 1)).outbox.length, 1)
  })

  it("an event confirms the written answers before it, so the same request asked by it is pending again", () => {
    const confirmed = queued(received(key), answerFor(key, 0))
    confirmed.wrote("written")
    confirmed.event()
    assert.strictEqual(confirmed.status(key), "sent")
    const askedAgain = queued(received(key), answerFor(key, 0))
    askedAgain.wrote("written")
    askedAgain.event(key)
    assert.strictEqual(askedAgain.status(key), "pending")
  })

  it("a refused answer leaves its request pending; a drop writes the unconfirmed again first", () => {
    const two = queued(queued(received(key, other), answerFor(key, 0)), answerFor(other, 1))
    two.refused()
    assert.strictEqual(two.status(key), "pending")
    assert.deepStrictEqual(frames(two.outbox), ["answer-1"])
    const dropped = queued(queued(received(key, other), answerFor(key, 0)), answerFor(other, 1))
    dropped.wrote("written")
    dropped.requeue()
    assert.deepStrictEqual(frames(dropped.outbox), ["answer-0", "answer-1"])
    assert.strictEqual(dropped.status(key), "queued")
  })

  it("unsent lists the unconfirmed then the outbox; a clean end confirms the written first", () => {
    const ledger = queued(queued(received(key, other), answerFor(key, 0)), answerFor(other, 1))
    ledger.wrote("written")
    assert.deepStrictEqual(ledger.unsent(false), [
      { actionSessionId: "as_1", resourceType: "browser_use" },
      { actionSessionId: "as_2", resourceType: "browser_use" }
    ])
    assert.deepStrictEqual(ledger.close(true), [{ actionSessionId: "as_2", resourceType: "browser_use" }])
    assert.isUndefined(ledger.status(key))
  })

  it("transitions without answers change nothing; requests from an earlier connection are pending", () => {
    const ledger = new Ledger.Ledger()
    ledger.event()
    ledger.confirm()
    assert.strictEqual(ledger.requeue(), 0)
    ledger.wrote("written")
    ledger.refused()
    assert.deepStrictEqual([ledger.requests.size, ledger.outbox.length, ledger.unconfirmed.length], [0, 0, 0])
    assert.isUndefined(ledger.status(key))
    assert.strictEqual(new Ledger.Ledger([key]).status(key), "pending")
  })
})

describe("answer ledger bounds", () => {
  const answerTo = (key: string, n: number): Ledger.QueuedAnswer => ({
    key,
    frame: `answer-${n}`,
    data: { granted: true, resource_type: "browser_use", action_session_id: `as_${n}` }
  })
  const keyChars = (ledger: Ledger.Ledger): number => {
    let chars = 0
    for (const key of ledger.requests.keys()) chars += key.length
    return chars
  }

  it("a key is at most MAX_KEY_LENGTH characters: a long one is a fingerprint, equal for equal ids, never a short key's", () => {
    const long = "x".repeat(256 * 1024)
    const key = Ledger.requestKey(long, "request_user_input")
    assert.isAtMost(key.length, Ledger.MAX_KEY_LENGTH)
    assert.strictEqual(Ledger.requestKey(`${"x".repeat(256 * 1024)}`, "request_user_input"), key)
    assert.notStrictEqual(Ledger.requestKey(`${long.slice(1)}y`, "request_user_input"), key, "differs at the end only")
    assert.notStrictEqual(Ledger.requestKey(long, "admin_permission_request"), key)
    assert.notStrictEqual(Ledger.requestKey(`${long}x`, "request_user_input"), key, "one character longer")
    const short = Ledger.requestKey("as_1", "browser_use")
    assert.strictEqual(short, "as_1\u0000browser_use", "a short key is kept whole")
    assert.isTrue(key.startsWith("\u0001"))
  })

  it("U16 a long key still answers its own request and no other", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ minLength: 300, maxLength: 2000 }),
        FastCheck.string({ minLength: 1, maxLength: 4 }),
        (id, suffix) => {
          const key = Ledger.requestKey(id, "request_user_input")
          const other = Ledger.requestKey(id + suffix, "request_user_input")
          assert.notStrictEqual(key, other)
          const ledger = new Ledger.Ledger([key])
          assert.strictEqual(ledger.queue(answerTo(other, 0), 8), "never-received")
          assert.isUndefined(ledger.queue(answerTo(key, 1), 8))
        }
      ),
      { numRuns: 200 }
    )
  })

  it("5,000 requests with 64 KiB action session ids: at most 2 x MAX_REQUESTS remembered, keys bounded, the newest pending", () => {
    const big = "s".repeat(64 * 1024)
    const ledger = new Ledger.Ledger()
    let peak = 0
    for (let i = 0; i < 5000; i++) {
      ledger.received(Ledger.requestKey(`${big}${i}`, "request_user_input"))
      peak = Math.max(peak, ledger.requests.size)
    }
    assert.isAtMost(peak, 2 * Ledger.MAX_REQUESTS)
    assert.isAtMost(keyChars(ledger), 2 * Ledger.MAX_REQUESTS * Ledger.MAX_KEY_LENGTH)
    // The newest MAX_REQUESTS are all still answerable; the oldest were forgotten, and counted.
    for (let i = 5000 - Ledger.MAX_REQUESTS; i < 5000; i++) {
      assert.strictEqual(ledger.status(Ledger.requestKey(`${big}${i}`, "request_user_input")), "pending")
    }
    assert.isUndefined(ledger.status(Ledger.requestKey(`${big}0`, "request_user_input")))
    assert.strictEqual(ledger.forgotten, 5000 - ledger.requests.size)
  })

  it("settled requests are forgotten first; an answer on its way never is", () => {
    const ledger = new Ledger.Ledger()
    const keyOf = (i: number) => Ledger.requestKey(`as_${i}`, "browser_use")
    const answered = (key: string, n: number) => {
      assert.isUndefined(ledger.queue(answerTo(key, n), 8))
    }
    // MAX_REQUESTS answered and confirmed (settled).
    for (let i = 0; i < Ledger.MAX_REQUESTS; i++) {
      ledger.received(keyOf(i))
      answered(keyOf(i), i)
      ledger.wrote("confirmed")
    }
    // One answer written and not confirmed, one queued: on their way.
    ledger.received(keyOf(-1))
    ledger.received(keyOf(-2))
    answered(keyOf(-2), -2)
    ledger.wrote("written")
    answered(keyOf(-1), -1)
    // Then more than MAX_REQUESTS pending.
    for (let i = Ledger.MAX_REQUESTS; i < 2 * Ledger.MAX_REQUESTS + 10; i++) ledger.received(keyOf(i))
    assert.isAtMost(ledger.requests.size, 2 * Ledger.MAX_REQUESTS)
    for (let i = 0; i < Ledger.MAX_REQUESTS; i++) assert.isUndefined(ledger.status(keyOf(i)), `settled ${i} forgotten`)
    // At 2 x MAX_REQUESTS + 1 (1,024 settled, 2 on their way, 1,023 pending) it forgot down to
    // MAX_REQUESTS: the 1,024 settled, then the one oldest pending.
    assert.strictEqual(ledger.forgotten, 1)
    assert.isUndefined(ledger.status(keyOf(Ledger.MAX_REQUESTS)), "the oldest pending")
    assert.strictEqual(ledger.status(keyOf(Ledger.MAX_REQUESTS + 1)), "pending")
    assert.strictEqual(ledger.status(keyOf(-1)), "queued")
    assert.strictEqual(ledger.status(keyOf(-2)), "unconfirmed")
    assert.strictEqual(ledger.status(keyOf(2 * Ledger.MAX_REQUESTS + 9)), "pending")
  })

  it("unsent names each answer by its own data (a long key is a fingerprint)", () => {
    const long = "y".repeat(1000)
    const key = Ledger.requestKey(long, "request_user_input")
    const ledger = new Ledger.Ledger([key])
    ledger.queue({ key, frame: "f", data: { granted: true, resource_type: "request_user_input", action_session_id: long } }, 8)
    assert.deepStrictEqual(ledger.close(false), [{ actionSessionId: long, resourceType: "request_user_input" }])
  })
})

describe("storageKey", () => {
  // Decodes a stored key, the inverse the escaping must have for it to be one to one.
  const unescape = (stored: string): string =>
    stored.replace(/\u0001(0|1|s([0-9a-f]{4}))/g, (_, kind: string, hex: string | undefined) =>
      kind === "0" ? "\u0000" : kind === "1" ? "\u0001" : String.fromCharCode(parseInt(hex!, 16)))
  const wellFormed = (text: string): boolean => {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0xd800 && c <= 0xdbff) {
        const next = text.charCodeAt(i + 1)
        if (!(next >= 0xdc00 && next <= 0xdfff)) return false
        i += 1
      } else if (c >= 0xdc00 && c <= 0xdfff) return false
    }
    return true
  }

  it("holds no U+0000 and no lone surrogate, is one to one, and is bounded (property)", () => {
    const unit = FastCheck.oneof(
      FastCheck.constantFrom("\u0000", "\u0001", "\ud800", "\udfff", "\ud83d\ude00", "/", "a", "é"),
      FastCheck.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
    )
    const text = FastCheck.array(unit, { maxLength: 300 }).map((units) => units.join(""))
    FastCheck.assert(FastCheck.property(text, text, (id, type) => {
      const key = Ledger.requestKey(id, type)
      const stored = Ledger.storageKey(key)
      assert.ok(!stored.includes("\u0000"))
      assert.ok(wellFormed(stored))
      assert.strictEqual(unescape(stored), key)
      assert.ok(new TextEncoder().encode(stored).length <= 1_536)
    }))
  })

  it("a plain key is kept as it is; the key's separator is escaped", () => {
    assert.strictEqual(Ledger.storageKey("as_1"), "as_1")
    assert.strictEqual(Ledger.storageKey(Ledger.requestKey("as_1", "otp")), "as_1\u00010otp")
  })
})
