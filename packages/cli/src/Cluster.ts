/**
 * The cluster commands: `runner` (join a cluster and run sessions), `watch <sessionId>` (follow a
 * session's log from any machine of the cluster) and `answer <sessionId>` (answer its pending
 * request from any machine). See docs/scale-out.md.
 *
 * The database URL comes from `--database-url` or `CLUSTER_DATABASE_URL`.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { ClusterSessions, NodeClusterSessions } from "effect-agent-session/cluster"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import * as CliConfig from "./Config.js"
import { CliExit, ExitCode, UsageError } from "./ExitCode.js"
import * as Render from "./Render.js"

/** One line on standard output (the command line's sink: its `Console` is silenced for @effect/cli). */
const println = (line: string) => Effect.sync(() => Render.processSink.out(`${line}\n`))

/**
 * The environment variable of the cluster's PostgreSQL URL.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_DATABASE_URL = "CLUSTER_DATABASE_URL"

const databaseUrl = Options.redacted("database-url").pipe(
  Options.withDescription(`The cluster's PostgreSQL URL (default: $${ENV_DATABASE_URL}; prefer the variable: flags show in ps)`),
  Options.optional
)

const resolveDatabaseUrl = (flag: Option.Option<Redacted.Redacted<string>>) =>
  Effect.flatMap(CliConfig.secretOrEnv(flag, ENV_DATABASE_URL), (value) =>
    Option.match(value, {
      onNone: () => Effect.fail(new UsageError({ message: `no database URL: set ${ENV_DATABASE_URL} or pass --database-url` })),
      onSome: Effect.succeed
    }))

/**
 * A client-only member of the cluster for `watch` and `answer`: they never call the service's
 * HTTP API (only `start` would), so the service's configuration is not needed.
 */
const clientLayer = (url: Redacted.Redacted<string>) =>
  NodeClusterSessions.layerClient({ databaseUrl: url, maxConnections: 2 }).pipe(
    Layer.provide(NodeAgentSessions.layer({ baseUrl: "http://127.0.0.1", wsUrl: "ws://127.0.0.1" }))
  )

/**
 * `runner`: joins the cluster and runs sessions until interrupted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runner = Command.make(
  "runner",
  {
    ...CliConfig.connectionOptions,
    databaseUrl,
    host: Options.text("host").pipe(
      Options.withDescription("The address the other members reach this runner at"),
      Options.withDefault("127.0.0.1")
    ),
    port: Options.integer("port").pipe(Options.withDescription("The runner's port"), Options.withDefault(34431)),
    listenHost: Options.text("listen-host").pipe(
      Options.withDescription("The address to listen on, when it differs from --host (such as 0.0.0.0)"),
      Options.optional
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const url = yield* resolveDatabaseUrl(flags.databaseUrl)
      const connection = yield* CliConfig.resolve(flags)
      const RunnerLive = NodeClusterSessions.layerRunner({
        databaseUrl: url,
        host: flags.host,
        port: flags.port,
        listenHost: Option.getOrUndefined(flags.listenHost)
      }).pipe(Layer.provide(NodeAgentSessions.layer(CliConfig.layerOptions(connection))))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(RunnerLive)
        yield* println(`runner ${flags.host}:${flags.port} joined the cluster`)
        return yield* Effect.never
      }))
    })
).pipe(Command.withDescription("Join a cluster (PostgreSQL storage) and run sessions until interrupted"))

/**
 * `watch <sessionId>`: prints the session's log (`#seq event payload`) from `--from-seq`, then
 * live, until its run ends; exit 0 when it completed, 7 when it ended without `complete`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch = Command.make(
  "watch",
  {
    databaseUrl,
    sessionId: Args.text({ name: "sessionId" }),
    fromSeq: Options.integer("from-seq").pipe(Options.withDescription("The first sequence number"), Options.withDefault(1))
  },
  (flags) =>
    Effect.gen(function*() {
      const url = yield* resolveDatabaseUrl(flags.databaseUrl)
      yield* Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        yield* sessions.events(flags.sessionId, flags.fromSeq).pipe(
          Stream.runForEach((logged) => {
            const wire = SessionEvent.toWire(logged.event)
            return println(`#${logged.seq} ${wire.event} ${JSON.stringify(wire.payload)}`)
          })
        )
        const status = yield* sessions.status(flags.sessionId)
        yield* println(`run: ${status.run}${Option.match(status.endReason, { onNone: () => "", onSome: (r) => ` (${r})` })}`)
        if (status.run !== "complete") return yield* new CliExit({ code: ExitCode.endedWithoutComplete })
      }).pipe(Effect.provide(clientLayer(url)))
    })
).pipe(Command.withDescription("Follow a session's log from any machine of the cluster"))

/**
 * `answer <sessionId>`: answers the session's pending request (the first one, or the one of
 * `--request <action_session_id>`): a grant (with `--input`), or `--deny`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answer = Command.make(
  "answer",
  {
    databaseUrl,
    sessionId: Args.text({ name: "sessionId" }),
    request: Options.text("request").pipe(
      Options.withDescription("The action_session_id of the request (default: the first pending one)"),
      Options.optional
    ),
    input: Options.text("input").pipe(Options.withDescription("The input to grant with"), Options.optional),
    deny: Options.boolean("deny").pipe(Options.withDescription("Deny the request instead of granting it"))
  },
  (flags) =>
    Effect.gen(function*() {
      const url = yield* resolveDatabaseUrl(flags.databaseUrl)
      yield* Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        const status = yield* sessions.status(flags.sessionId)
        const pending = status.pending.find((r) =>
          Option.match(flags.request, { onNone: () => true, onSome: (id) => r.action_session_id === id })
        )
        if (pending === undefined) {
          return yield* new UsageError({ message: `no pending request in session ${flags.sessionId}` })
        }
        const given = flags.deny
          ? { _tag: "Deny" as const }
          : { _tag: "Grant" as const, input: flags.input }
        yield* sessions.respond(flags.sessionId, pending, given)
        yield* println(
          `answered ${SessionEvent.resourceTypeRaw(pending.resource_type)} (${pending.action_session_id}): ${
            flags.deny ? "deny" : "grant"
          }`
        )
      }).pipe(Effect.provide(clientLayer(url)))
    })
).pipe(Command.withDescription("Answer a session's pending request from any machine of the cluster"))
