/**
 * The event channel's tap, where a recorder would see a connection's traffic: this edition has no
 * recorder, so a connection's transport is never tapped and the frame path stays as it is.
 */
import * as Effect from "effect/Effect"
import type * as Dialect from "../../Dialect.js"
import type { Transport } from "../../../binding/internal/channel/transport.js"

/** The transport a connection runs: the one given, as nothing here records connections. */
export const tapTransport = (
  transport: Transport,
  _info: {
    readonly sessionId: string
    readonly dialect: Dialect.Dialect
    readonly transport: "websocket" | "sse"
  }
): Effect.Effect<Transport> => Effect.succeed(transport)
