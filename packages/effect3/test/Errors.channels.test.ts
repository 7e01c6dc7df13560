/**
 * Every public operation's error channel is the exact union of what it can fail with, the Effect 3
 * edition's pins: the operations of this edition and of the packages beside it (simulator, replay,
 * recording, cluster), and docs/errors.md's tables checked against them. The pins that read the
 * same on both lines are in `shared/Errors.channels.test.ts`.
 *
 * - The type pins below (`expectTypeOf(...).toEqualTypeOf(...)`, an exact equality) fail to
 *   COMPILE (`npm run typecheck`, the first step of `npm test`) when a member is added to or
 *   dropped from an operation's channel or a named union.
 * - `operations` and `unions` are the same facts as runtime lists of tags, pinned to the types
 *   by the `Tags<...>` pins; the tests compare them with the tables of docs/errors.md.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import type * as SocketServer from "@effect/platform/SocketServer"
import type * as SqlError from "@effect/sql/SqlError"
import { assert, describe, it } from "@effect/vitest"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { readFileSync, readdirSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { expectTypeOf } from "vitest"
import { Recording as Format } from "effect-agent-session-core"
import type * as AgentApi from "../src/AgentApi.js"
import type * as AgentSessions from "../src/AgentSessions.js"
import * as ClusterErrors from "effect-agent-session-cluster/ClusterErrors"
import type * as ClusterSessions from "effect-agent-session-cluster/ClusterSessions"
import type * as EventLog from "effect-agent-session-cluster/EventLog"
import type * as NodeClusterSessions from "effect-agent-session-cluster/NodeClusterSessions"
import type * as Credentials from "../src/Credentials.js"
import * as Errors from "../src/Errors.js"
import type * as EventStream from "../src/EventStream.js"
import type * as NodeAgentSessions from "../src/NodeAgentSessions.js"
import type * as SessionEvent from "../src/SessionEvent.js"
import type * as Simulator from "effect-agent-session-simulator/Simulator"
import type * as Recording from "../src/Recording.js"
import type * as Replay from "effect-agent-session-simulator/Replay"
import * as AgentSessionsTest from "../src/testing/AgentSessionsTest.js"
import type * as Wire from "../src/Wire.js"
import {
  type ErrorOf,
  type Fails,
  type forEachBatch,
  type forEachBatchFailing,
  type HandlerError,
  type keyForOnboard,
  type keyForSession,
  type run,
  type runAccessor,
  type runWithHandlers
} from "./shared/channels.js"

const root = join(import.meta.dirname, "..")

// ---------------------------------------------------------------------------
// What each operation can fail with: the types
// ---------------------------------------------------------------------------

/** The tags of a union of errors (`never`: none). */
type Tags<E> = E extends { readonly _tag: infer T } ? T : never

const _withReplayErrors = () => AgentSessionsTest.withReplayErrors(Effect.void)

/**
 * The operations, each with the exact error type of its public signature. A `Tags<...>` pin
 * below checks each against {@link operations}.
 */
interface Channels {
  readonly 'Credentials.keyFor("onboard")': ErrorOf<ReturnType<typeof keyForOnboard>>
  readonly "Credentials.keyFor": ErrorOf<ReturnType<typeof keyForSession>>
  readonly "Credentials.layer": ErrorOf<ReturnType<typeof Credentials.layer>>
  readonly "AgentApi.layer": ErrorOf<ReturnType<typeof AgentApi.layer>>
  readonly "AgentApi.layerConfig": ErrorOf<ReturnType<typeof AgentApi.layerConfig>>
  readonly "AgentApi.onboard": Fails<AgentApi.Service["onboard"]>
  readonly "AgentApi.createSession": Fails<AgentApi.Service["createSession"]>
  readonly "AgentApi.getSession": Fails<AgentApi.Service["getSession"]>
  readonly "EventStream.layer": ErrorOf<EventStream.LayerType>
  readonly "EventStream.layerConfig": ErrorOf<ReturnType<typeof EventStream.layerConfig>>
  readonly "EventStream.connect": Fails<EventStream.Service["connect"]>
  readonly "EventStream.events": Fails<EventStream.Service["events"]>
  readonly "Connection.events": ErrorOf<EventStream.Connection["events"]>
  readonly "Connection.respond": Fails<EventStream.Connection["respond"]>
  readonly "Connection.close": ErrorOf<EventStream.Connection["close"]>
  readonly "AgentSessions.layer": ErrorOf<typeof AgentSessions.layer>
  readonly "AgentSessions.onboard": Fails<AgentSessions.Service["onboard"]>
  readonly "AgentSessions.start": Fails<AgentSessions.Service["start"]>
  readonly "AgentSessions.attach": Fails<AgentSessions.Service["attach"]>
  readonly "AgentSessions.run": ErrorOf<ReturnType<typeof run>>
  readonly "RunningSession.events": ErrorOf<AgentSessions.RunningSession["events"]>
  readonly "RunningSession.forEachBatch": Fails<typeof forEachBatch>
  readonly "RunningSession.outcome": ErrorOf<AgentSessions.RunningSession["outcome"]>
  readonly "RunningSession.respond": Fails<AgentSessions.RunningSession["respond"]>
  readonly "RunningSession.close": ErrorOf<AgentSessions.RunningSession["close"]>
  readonly "NodeAgentSessions.layer": ErrorOf<ReturnType<typeof NodeAgentSessions.layer>>
  readonly "NodeAgentSessions.layerConfig": ErrorOf<ReturnType<typeof NodeAgentSessions.layerConfig>>
  readonly "Wire.decodeFrame": Either.Either.Left<ReturnType<typeof Wire.decodeFrame>>
  readonly "SessionEvent.parseJsonResponse": Either.Either.Left<ReturnType<typeof SessionEvent.parseJsonResponse>>
  readonly "AgentSessionsTest.layer": ErrorOf<ReturnType<typeof AgentSessionsTest.layer>>
  readonly "Simulator.make": ErrorOf<ReturnType<typeof Simulator.make>>
  readonly "Simulator.layer": ErrorOf<ReturnType<typeof Simulator.layer>>
  readonly "AgentSessionsTest.replay": ErrorOf<ReturnType<typeof AgentSessionsTest.replay>>
  readonly "AgentSessionsTest.withReplayErrors": ErrorOf<ReturnType<typeof _withReplayErrors>>
  readonly "Recording.layer": ErrorOf<ReturnType<typeof Recording.layer>>
  readonly "Recording.flush": ErrorOf<typeof Recording.flush>
  readonly "Recording.read": ErrorOf<ReturnType<typeof Recording.read>>
  readonly "Replay.make": ErrorOf<ReturnType<typeof Replay.make>>
  readonly "Replay.result": ErrorOf<Replay.Service["result"]>
  readonly "ClusterSessions.start": Fails<ClusterSessions.Service["start"]>
  readonly "ClusterSessions.attach": Fails<ClusterSessions.Service["attach"]>
  readonly "ClusterSessions.events": Fails<ClusterSessions.Service["events"]>
  readonly "ClusterSessions.respond": Fails<ClusterSessions.Service["respond"]>
  readonly "ClusterSessions.status": Fails<ClusterSessions.Service["status"]>
  readonly "ClusterSessions.outcome": Fails<ClusterSessions.Service["outcome"]>
  readonly "ClusterSessions.close": Fails<ClusterSessions.Service["close"]>
  readonly "ClusterSessions.layerEmbedded": ErrorOf<ReturnType<typeof ClusterSessions.layerEmbedded>>
  readonly "EventLog.Service": Fails<EventLog.Service[keyof EventLog.Service]>
  readonly "EventLog.layerSql": ErrorOf<ReturnType<typeof EventLog.layerSql>>
  readonly "NodeClusterSessions.layerRunner": ErrorOf<ReturnType<typeof NodeClusterSessions.layerRunner>>
  readonly "NodeClusterSessions.layerClient": ErrorOf<ReturnType<typeof NodeClusterSessions.layerClient>>
}

// ---------------------------------------------------------------------------
// The same facts as runtime lists (the docs tables are checked against these)
// ---------------------------------------------------------------------------

/** The named unions of `Errors` (and `ClusterErrors`), by their members' tags. */
const unions = {
  HttpStatusError: [
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "PayloadTooLarge",
    "RateLimited",
    "ServerError",
    "UnexpectedStatus"
  ],
  CredentialsError: ["MissingCredentials", "MissingAgentKey"],
  OnboardError: [
    "InvalidRequest",
    "MissingCredentials",
    "HttpStatusError",
    "TransportError",
    "ResponseDecodeError",
    "ResponseTooLarge",
    "OutcomeUnknown"
  ],
  CreateSessionError: ["OnboardError", "MissingAgentKey"],
  GetSessionError: [
    "InvalidRequest",
    "CredentialsError",
    "HttpStatusError",
    "TransportError",
    "RequestTimeout",
    "ResponseDecodeError",
    "ResponseTooLarge"
  ],
  AgentApiError: ["OnboardError", "CreateSessionError", "GetSessionError"],
  FrameError: ["MalformedFrame", "EventDecodeError", "FrameTooLarge", "UnknownEvent"],
  EventStreamError: [
    "FrameError",
    "CredentialsError",
    "HandshakeRejected",
    "Superseded",
    "ConnectionLost",
    "NeverConnected",
    "BufferOverflow"
  ],
  RespondError: ["RequestNotPending", "AnswerBufferFull"],
  RunningSessionError: ["EventStreamError", "ActionBudgetExceeded", "SessionEndedWithoutComplete"],
  StartError: ["CreateSessionError", "InsecureTransport"],
  RunError: ["StartError", "RunningSessionError", "RespondError"],
  ReplayError: ["InvalidRecording", "ReplayMismatch"],
  AgentSessionError: ["AgentApiError", "RunError", "ConnectTimeout", "ResponseParseError", "RecordingFailed", "ReplayError"],
  ClusterError: ["ClusterUnavailable", "SessionNotFound", "EventLogError"]
} as const satisfies Record<string, ReadonlyArray<string>>

type UnionName = keyof typeof unions

/** The tags of a list whose entries are tags or union names, union names expanded. */
type Expand<L> = L extends UnionName ? Expand<(typeof unions)[L][number]> : L

/** What each operation fails with: tags, union names, or platform errors by their tag. */
const operations = {
  'Credentials.keyFor("onboard")': ["MissingCredentials"],
  "Credentials.keyFor": ["CredentialsError"],
  "Credentials.layer": [],
  "AgentApi.layer": ["InvalidRequest", "InsecureTransport"],
  "AgentApi.layerConfig": ["InvalidRequest", "InsecureTransport", "ConfigError"],
  "AgentApi.onboard": ["OnboardError"],
  "AgentApi.createSession": ["CreateSessionError"],
  "AgentApi.getSession": ["GetSessionError"],
  "EventStream.layer": [],
  "EventStream.layerConfig": ["ConfigError"],
  "EventStream.connect": ["InsecureTransport"],
  "EventStream.events": ["EventStreamError", "InsecureTransport"],
  "Connection.events": ["EventStreamError"],
  "Connection.respond": ["RespondError"],
  "Connection.close": [],
  "AgentSessions.layer": [],
  "AgentSessions.onboard": ["OnboardError"],
  "AgentSessions.start": ["StartError"],
  "AgentSessions.attach": ["InsecureTransport"],
  "AgentSessions.run": ["RunError"],
  "RunningSession.events": ["RunningSessionError"],
  "RunningSession.forEachBatch": ["RunningSessionError"],
  "RunningSession.outcome": ["RunningSessionError"],
  "RunningSession.respond": ["RespondError"],
  "RunningSession.close": [],
  "NodeAgentSessions.layer": ["InvalidRequest", "InsecureTransport"],
  "NodeAgentSessions.layerConfig": ["InvalidRequest", "InsecureTransport", "ConfigError"],
  "Wire.decodeFrame": ["FrameError"],
  "SessionEvent.parseJsonResponse": ["ResponseParseError"],
  "AgentSessionsTest.layer": [],
  "Simulator.make": ["ServeError"],
  "Simulator.layer": [],
  "AgentSessionsTest.replay": ["InvalidRecording"],
  "AgentSessionsTest.withReplayErrors": ["ReplayError"],
  "Recording.layer": ["RecordingFailed"],
  "Recording.flush": ["RecordingFailed"],
  "Recording.read": ["InvalidRecording"],
  "Replay.make": ["InvalidRecording", "ServeError"],
  "Replay.result": ["ReplayError"],
  "ClusterSessions.start": ["CreateSessionError", "ClusterUnavailable"],
  "ClusterSessions.attach": ["SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.events": ["SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.respond": ["RequestNotPending", "SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.status": ["SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.outcome": ["SessionEndedWithoutComplete", "SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.close": ["SessionNotFound", "ClusterUnavailable"],
  "ClusterSessions.layerEmbedded": [],
  "EventLog.Service": ["EventLogError"],
  "EventLog.layerSql": ["EventLogError"],
  "NodeClusterSessions.layerRunner": ["SqlError", "EventLogError", "SocketServerError", "ConfigError", "ClusterSecretError"],
  "NodeClusterSessions.layerClient": ["SqlError", "ConfigError", "ClusterSecretError"]
} as const satisfies { readonly [K in keyof Channels]: ReadonlyArray<string> }

// ---------------------------------------------------------------------------
// The pins: each fails to compile when a member is added or dropped
// ---------------------------------------------------------------------------

type OperationTags<K extends keyof Channels> = Expand<(typeof operations)[K][number]>

// Every operation: its channel's tags are exactly its row's (a mismatch names the operation).
expectTypeOf<{ readonly [K in keyof Channels]: Tags<Channels[K]> }>().toEqualTypeOf<
  { readonly [K in keyof Channels]: OperationTags<K> }
>()

/** The named unions, by name. */
interface Unions {
  readonly HttpStatusError: Errors.HttpStatusError
  readonly CredentialsError: Errors.CredentialsError
  readonly OnboardError: Errors.OnboardError
  readonly CreateSessionError: Errors.CreateSessionError
  readonly GetSessionError: Errors.GetSessionError
  readonly AgentApiError: Errors.AgentApiError
  readonly FrameError: Errors.FrameError
  readonly EventStreamError: Errors.EventStreamError
  readonly RespondError: Errors.RespondError
  readonly RunningSessionError: Errors.RunningSessionError
  readonly StartError: Errors.StartError
  readonly RunError: Errors.RunError
  readonly ReplayError: Errors.ReplayError
  readonly AgentSessionError: Errors.AgentSessionError
  readonly ClusterError: ClusterErrors.ClusterError
}

// The named unions: their members are exactly the runtime lists.
expectTypeOf<{ readonly [K in UnionName]: Tags<Unions[K]> }>().toEqualTypeOf<
  { readonly [K in UnionName]: Expand<(typeof unions)[K][number]> }
>()

// The signatures name the unions themselves (not an equal union spelled out), so that a reader
// of a signature learns which union it is.
expectTypeOf<Channels["Credentials.keyFor"]>().toEqualTypeOf<Errors.CredentialsError>()
expectTypeOf<Channels["AgentApi.onboard"]>().toEqualTypeOf<Errors.OnboardError>()
expectTypeOf<Channels["AgentApi.createSession"]>().toEqualTypeOf<Errors.CreateSessionError>()
expectTypeOf<Channels["AgentApi.getSession"]>().toEqualTypeOf<Errors.GetSessionError>()
expectTypeOf<Channels["Connection.events"]>().toEqualTypeOf<Errors.EventStreamError>()
expectTypeOf<Channels["EventStream.events"]>().toEqualTypeOf<Errors.EventStreamError | Errors.InsecureTransport>()
expectTypeOf<Channels["Connection.respond"]>().toEqualTypeOf<Errors.RespondError>()
expectTypeOf<Channels["AgentSessions.start"]>().toEqualTypeOf<Errors.StartError>()
expectTypeOf<Channels["AgentSessions.run"]>().toEqualTypeOf<Errors.RunError>()
expectTypeOf<Fails<typeof runAccessor>>().toEqualTypeOf<Errors.RunError>()
expectTypeOf<Channels["RunningSession.outcome"]>().toEqualTypeOf<Errors.RunningSessionError>()
expectTypeOf<Channels["Simulator.make"]>().toEqualTypeOf<HttpServerError.ServeError>()
expectTypeOf<Channels["AgentApi.layerConfig"]>().toEqualTypeOf<
  Errors.InvalidRequest | Errors.InsecureTransport | ConfigError.ConfigError
>()
expectTypeOf<Channels["NodeClusterSessions.layerRunner"]>().toEqualTypeOf<
  | SqlError.SqlError
  | EventLog.EventLogError
  | SocketServer.SocketServerError
  | ConfigError.ConfigError
  | ClusterErrors.ClusterSecretError
>()

// A user's handler errors pass through `run` unchanged, beside the run's own.
expectTypeOf<Fails<typeof runWithHandlers>>().toEqualTypeOf<Errors.RunError | HandlerError>()
// And a function's errors pass through `forEachBatch` unchanged, beside the events' own.
expectTypeOf<Fails<typeof forEachBatchFailing>>().toEqualTypeOf<Errors.RunningSessionError | HandlerError>()

// The test kit takes exactly the errors the real operations can fail with.
expectTypeOf<Parameters<typeof AgentSessionsTest.failNextCreate>[0]>().toEqualTypeOf<Errors.CreateSessionError>()
expectTypeOf<Parameters<typeof AgentSessionsTest.failNextOnboard>[0]>().toEqualTypeOf<Errors.OnboardError>()
expectTypeOf<Parameters<typeof AgentSessionsTest.Step.fail>[0]>().toEqualTypeOf<Errors.EventStreamError>()

// The `Schema` of all errors and the type of all errors are the same union.
expectTypeOf<typeof Errors.AgentSessionError.Type>().toEqualTypeOf<Errors.AgentSessionError>()
expectTypeOf<typeof ClusterErrors.ClusterError.Type>().toEqualTypeOf<
  ClusterErrors.ClusterError
>()

// Requirements are not errors: the accessors still need their services.
expectTypeOf<ReturnType<typeof runAccessor>>().toEqualTypeOf<
  Effect.Effect<AgentSessions.Outcome, Errors.RunError, AgentSessions.AgentSessions>
>()
expectTypeOf<ReturnType<typeof AgentApi.layer>>().toEqualTypeOf<
  Layer.Layer<AgentApi.AgentApi, Errors.InsecureTransport | Errors.InvalidRequest, HttpClient.HttpClient | Credentials.Credentials>
>()
expectTypeOf<ReturnType<AgentSessions.Service["attach"]>>().toEqualTypeOf<
  Effect.Effect<AgentSessions.RunningSession, Errors.InsecureTransport, Scope.Scope>
>()

// ---------------------------------------------------------------------------
// The docs tables against the runtime lists
// ---------------------------------------------------------------------------

/** Expands a list of tags and union names into tags, sorted. */
const expand = (names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out = new Set<string>()
  const visit = (name: string): void => {
    const members: ReadonlyArray<string> | undefined = (unions as Record<string, ReadonlyArray<string>>)[name]
    if (members === undefined) out.add(name)
    else members.forEach(visit)
  }
  names.forEach(visit)
  return [...out].sort()
}

/** The rows of the markdown table that follows `heading`: first cell (backticks off) -> the names in backticks of the given cell. */
const tableAfter = (doc: string, heading: string, cell: number): ReadonlyMap<string, ReadonlyArray<string>> => {
  const start = doc.indexOf(heading)
  assert.isAtLeast(start, 0, `docs/errors.md has no "${heading}"`)
  const lines = doc.slice(start).split("\n").slice(1)
  const first = lines.findIndex((line) => line.startsWith("|"))
  const rows = new Map<string, ReadonlyArray<string>>()
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((text) => text.trim())
    // Notes in parentheses name other things: only the names outside them count.
    const listed = (cells[cell] ?? "").replace(/\([^()]*\)/g, "")
    const names = [...listed.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "")
    for (const key of [...(cells[0] ?? "").matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "")) {
      rows.set(key, names)
    }
  }
  return rows
}

describe("issue 21: every operation's error channel", () => {
  const doc = readFileSync(join(root, "..", "..", "docs/errors.md"), "utf8")

  it("the Schemas of all errors have exactly the members of the unions", () => {
    assert.deepStrictEqual(Errors.AgentSessionError.members.map((member) => member._tag).sort(), expand(["AgentSessionError"]))
    assert.deepStrictEqual(ClusterErrors.ClusterError.members.map((member) => member._tag).sort(), expand(["ClusterError"]))
  })

  it("a recording replays every error of the event channel: the core's list is EventStreamError's members and ConnectTimeout", () => {
    assert.deepStrictEqual([...Format.eventChannelErrorTags].sort(), [...expand(["EventStreamError"]), "ConnectTimeout"].sort())
  })

  it("the table of the unions in docs/errors.md lists exactly the members the types have", () => {
    const table = tableAfter(doc, "## The unions", 1)
    assert.deepStrictEqual([...table.keys()].sort(), Object.keys(unions).sort())
    for (const [name, members] of Object.entries(unions)) {
      assert.deepStrictEqual(expand(table.get(name) ?? []), expand(members), name)
    }
  })

  it("the table \"operation -> errors it can fail with\" in docs/errors.md matches the types", () => {
    const table = tableAfter(doc, "## What each operation fails with", 1)
    assert.deepStrictEqual([...table.keys()].sort(), Object.keys(operations).sort())
    for (const [operation, errors] of Object.entries(operations)) {
      assert.deepStrictEqual(expand(table.get(operation) ?? []), expand(errors), operation)
    }
  })

  it("no public signature outside the cluster package names a cluster error", () => {
    const files = (dir: string): ReadonlyArray<string> =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name)
        return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
      })
    const outside = [...files(join(root, "src")), ...files(join(root, "binding"))]
    assert.isAbove(outside.length, 20)
    for (const path of outside) {
      // The code, without comments (which may point the reader to the cluster module).
      const text = readFileSync(path, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "")
      for (const name of ["ClusterUnavailable", "EventLogError", "ClusterError", "ClusterErrors"]) {
        assert.notInclude(text, name, `${relative(root, path)} names ${name}`)
      }
    }
  })
})
