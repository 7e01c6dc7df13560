/**
 * The connection's state: its values (re-exported by `EventStream.ts`), the state the core decided
 * as one of them, and the cell that holds it. The cell is a plain value until someone asks for
 * `Connection.state`, then a `SubscriptionRef` from that value on: most connections are never
 * watched, and a `SubscriptionRef` (with its `PubSub`) is heap per connection (the repository's
 * src/internal/README.md, "One connection").
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Connection } from "effect-agent-session-core"
import type * as EventStream from "../../../src/EventStream.js"
import { doneDeferredUnsafe, makeDeferredUnsafe } from "../../../src/internal/line.js"

/** @internal */
export const ConnectionState = Data.taggedEnum<EventStream.ConnectionState>()

/** The states most connections go through, one value each for every connection (values are immutable). */
const connecting: EventStream.ConnectionState = ConnectionState.Connecting()
const openedOnce: EventStream.ConnectionState = ConnectionState.Open({ reconnects: 0, downtime: Option.none() })

/** The state the core decided, as this edition's value. */
export const fromCore = (state: Connection.State): EventStream.ConnectionState => {
  switch (state._tag) {
    case "Connecting":
      return connecting
    case "Open":
      if (state.reconnects === 0 && state.downtimeMillis === undefined) return openedOnce
      return ConnectionState.Open({
        reconnects: state.reconnects,
        downtime: state.downtimeMillis === undefined ? Option.none() : Option.some(Duration.millis(state.downtimeMillis))
      })
    case "Reconnecting":
      return ConnectionState.Reconnecting({ attempt: state.attempt, lastError: state.lastError })
    case "Closed":
      return ConnectionState.Closed(
        state.unsent === undefined ? { reason: state.reason } : { reason: state.reason, unsent: state.unsent }
      )
  }
}

/** The state of one connection. */
export class StateCell {
  private value: EventStream.ConnectionState = connecting
  private ref: SubscriptionRef.SubscriptionRef<EventStream.ConnectionState> | undefined = undefined
  /** Done once the state is `Closed`, made for the first who waits for it ({@link StateCell.closed}). */
  private closing: Deferred.Deferred<void> | undefined = undefined
  /** Done once the state has left `Connecting`, made for the first who waits for it ({@link StateCell.opened}). */
  private opening: Deferred.Deferred<void> | undefined = undefined

  /** The state now. */
  get current(): EventStream.ConnectionState {
    return this.value
  }

  /** Sets the state (and tells the watchers, if any). */
  set(value: EventStream.ConnectionState): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.value = value
      if (this.opening !== undefined && value._tag !== "Connecting") doneDeferredUnsafe(this.opening, Effect.void)
      if (this.closing !== undefined && value._tag === "Closed") doneDeferredUnsafe(this.closing, Effect.void)
      return this.ref === undefined ? Effect.void : SubscriptionRef.set(this.ref, value)
    })
  }

  /**
   * Returns once the state has left `Connecting` (the connection opened, or ended without
   * opening): a state never returns to `Connecting`.
   */
  opened(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.value._tag !== "Connecting") return Effect.void
      this.opening ??= makeDeferredUnsafe<void>()
      return Deferred.await(this.opening)
    })
  }

  /** Returns once the state is `Closed` (the connection has ended). */
  closed(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.value._tag === "Closed") return Effect.void
      this.closing ??= makeDeferredUnsafe<void>()
      return Deferred.await(this.closing)
    })
  }

  /** The state as a `SubscriptionRef`, made on first use from the state reached (a pure construction). */
  get subscriptionRef(): SubscriptionRef.SubscriptionRef<EventStream.ConnectionState> {
    this.ref ??= Effect.runSync(SubscriptionRef.make(this.value))
    return this.ref
  }
}
