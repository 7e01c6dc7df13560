/**
 * The tasks of the Effect 4 edition's measured child process (packages/effect4/bench/child.ts,
 * run on Node 22 by bench/effect4.ts), shared by both sides as types only: nothing here imports
 * either Effect.
 */

/** The Effect 4 floors (packages/effect4/bench/floors.ts). */
export type Effect4Floor = "floor-stream" | "floor-fiber" | "floor-socket"

/** One measurement of the Effect 4 edition, or of its floors. */
export type Effect4Task =
  | {
    readonly kind: "throughput"
    /** The floor (`ws` + `JSON.parse` -> `Queue` -> `Stream`), `EventStream.events` or `AgentSessions.attach`. */
    readonly variant: "floor" | "events" | "attach"
    readonly url: string
    readonly n: number
    readonly warmup: number
  }
  | {
    readonly kind: "memory" | "fibers" | "heap"
    readonly variant: Effect4Floor | "sdk"
    /** How SDK sessions are opened: `EventStream.connect` (default), or `AgentSessions.start` (create, then connect). */
    readonly path?: "connect" | "start" | undefined
    readonly url: string
    readonly count: number
    readonly concurrency: number
  }
  | {
    readonly kind: "firstEvent"
    readonly variant: "floor" | "sdk"
    readonly baseUrl: string
    readonly apiKey: string
    readonly sessions: number
    readonly warmup: number
    readonly events: number
  }
