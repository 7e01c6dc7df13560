/**
 * The conformance suite's scriptable hostile server (`startHostileServer`,
 * effect-agent-session-conformance: plain Node and `ws`) in an Effect 3 scope, for this edition's
 * tests that script a peer of their own (the generative suite, the replay tests): it is closed,
 * every socket destroyed, with the scope.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type HostileServer, type Script, startHostileServer } from "effect-agent-session-conformance"

export type { HostileServer, Script } from "effect-agent-session-conformance"

/** Starts a hostile server in the current scope. */
export const hostileServer = (script: Script): Effect.Effect<HostileServer, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startHostileServer(script)), (server) => Effect.promise(server.close))
