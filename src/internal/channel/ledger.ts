/**
 * INTERIM (lead): the answer ledger; replaced by the ledger helper's version with property tests.
 */
import * as Either from "effect/Either"
import type * as EventStream from "../../EventStream.js"
import type * as Wire from "../../Wire.js"

export type Status = "pending" | "queued" | "unconfirmed" | "sent"

export interface QueuedAnswer {
  readonly key: string
  readonly frame: string
  readonly data: Wire.AnswerData
}

export interface Ledger {
  readonly requests: ReadonlyMap<string, Status>
  readonly outbox: ReadonlyArray<QueuedAnswer>
  readonly unconfirmed: ReadonlyArray<QueuedAnswer>
}

export const requestKey = (actionSessionId: string, resourceType: string): string =>
  `${actionSessionId}\u0000${resourceType}`

export const empty: Ledger = { requests: new Map(), outbox: [], unconfirmed: [] }

const withStatus = (requests: ReadonlyMap<string, Status>, entries: ReadonlyArray<readonly [string, Status]>) => {
  const next = new Map(requests)
  for (const [key, status] of entries) next.set(key, status)
  return next
}

export const fromPending = (keys: ReadonlyArray<string>): Ledger =>
  keys.length === 0 ? empty : { ...empty, requests: withStatus(empty.requests, keys.map((k) => [k, "pending"] as const)) }

export const received = (ledger: Ledger, key: string): Ledger => {
  const status = ledger.requests.get(key)
  if (status === "queued" || status === "unconfirmed" || status === "pending") return ledger
  return { ...ledger, requests: withStatus(ledger.requests, [[key, "pending"]]) }
}

export const queue = (
  ledger: Ledger,
  answer: QueuedAnswer,
  limit: number
): Either.Either<Ledger, "never-received" | "already-answered" | "full"> => {
  const status = ledger.requests.get(answer.key)
  if (status === undefined) return Either.left("never-received")
  if (status !== "pending") return Either.left("already-answered")
  if (ledger.outbox.length >= limit) return Either.left("full")
  return Either.right({
    ...ledger,
    requests: withStatus(ledger.requests, [[answer.key, "queued"]]),
    outbox: [...ledger.outbox, answer]
  })
}

export const head = (ledger: Ledger): QueuedAnswer | undefined => ledger.outbox[0]

export const written = (ledger: Ledger, how: "confirmed" | "written"): Ledger => {
  const first = ledger.outbox[0]
  if (first === undefined) return ledger
  return how === "confirmed"
    ? { ...ledger, requests: withStatus(ledger.requests, [[first.key, "sent"]]), outbox: ledger.outbox.slice(1) }
    : {
      requests: withStatus(ledger.requests, [[first.key, "unconfirmed"]]),
      outbox: ledger.outbox.slice(1),
      unconfirmed: [...ledger.unconfirmed, first]
    }
}

export const refused = (ledger: Ledger): Ledger => {
  const first = ledger.outbox[0]
  if (first === undefined) return ledger
  return { ...ledger, requests: withStatus(ledger.requests, [[first.key, "pending"]]), outbox: ledger.outbox.slice(1) }
}

export const hasUnconfirmed = (ledger: Ledger): boolean => ledger.unconfirmed.length > 0

export const confirm = (ledger: Ledger): Ledger => {
  if (ledger.unconfirmed.length === 0) return ledger
  return {
    ...ledger,
    requests: withStatus(
      ledger.requests,
      ledger.unconfirmed.filter((a) => ledger.requests.get(a.key) === "unconfirmed").map((a) => [a.key, "sent"] as const)
    ),
    unconfirmed: []
  }
}

export const requeue = (ledger: Ledger): { readonly ledger: Ledger; readonly count: number } => {
  const count = ledger.unconfirmed.length
  if (count === 0) return { ledger, count }
  return {
    ledger: {
      requests: withStatus(ledger.requests, ledger.unconfirmed.map((a) => [a.key, "queued"] as const)),
      outbox: [...ledger.unconfirmed, ...ledger.outbox],
      unconfirmed: []
    },
    count
  }
}

export const isAnswered = (ledger: Ledger, key: string): boolean => ledger.requests.get(key) === "sent"

export const unsent = (ledger: Ledger, clean: boolean): ReadonlyArray<EventStream.UnsentAnswer> => {
  const left = clean ? ledger.outbox : [...ledger.unconfirmed, ...ledger.outbox]
  return left.map((answer) => {
    const cut = answer.key.indexOf("\u0000")
    return { actionSessionId: answer.key.slice(0, cut), resourceType: answer.key.slice(cut + 1) }
  })
}
