/**
 * The connection's state values (re-exported by `EventStream.ts`).
 */
import * as Data from "effect/Data"
import type * as EventStream from "../../EventStream.js"

/** @internal */
export const ConnectionState = Data.taggedEnum<EventStream.ConnectionState>()
