/**
 * The cluster commands: `runner` (join a cluster and run sessions), `submit` (create a session
 * and hand it to the cluster, then follow it to its end), `watch <sessionId>` (follow a session's
 * log from any machine of the cluster) and `answer <sessionId>` (answer its pending request from
 * any machine). See docs/scale-out.md.
 *
 * The database URL comes from `--database-url` or `CLUSTER_DATABASE_URL` (the variable the
 * library's `NodeClusterSessions` reads too). Every known failure is one line and an exit code:
 * an unreachable database or no runner answering is 5, an unknown session 2.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { ClusterSessions, type EventLog, NodeClusterSessions } from "effect-agent-session-cluster"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import * as CliConfig from "./Config.js"
import { CliExit, classify, ExitCode, UsageError } from "./ExitCode.js"
import * as Render from "./Render.js"

/** One line on standard output (the command line's sink: its `Console` is silenced for @effect/cli). */
const println = (line: string) => Effect.sync(() => Render.processSink.out(`${line}\n`))

/** Text from the service or the log, with control characters shown escaped (never sent raw to a terminal). */
const printable = (text: string): string =>
   
  text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** A word quoted for a POSIX shell when it is not plainly safe. */
const shellQuote = (word: string): string => /^[A-Za-z0-9_.:@%+=,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/** How long a command waits for the cluster to carry a call (no runner yet, a runner dying) before exit 5. */
const clusterPatience = Duration.seconds(15)

const attemptTimeout = Duration.seconds(5)

/** How long a command waits for a session the cluster has no record of (a typed not-found after). */
const notFoundAfter = Duration.seconds(5)

const commandRetry = Schedule.spaced(Duration.millis(200)).pipe(Schedule.upTo(clusterPatience))

/**
 * Ends a cluster command on a known failure: one line on standard error, the documented exit
 * code (an unreachable database or no runner answering: 5; an unknown session: 2; a taken port:
 * 2); the SDK's own errors as every command reports them.
 */
const reportFailure = (error: unknown): Effect.Effect<never, CliExit> =>
  Effect.zipRight(
    Effect.sync(() => {
      const { code, message } = describeFailure(error)
      process.stderr.write(`error: ${message}\n`)
      return code
    }),
    Effect.suspend(() => Effect.fail(new CliExit({ code: describeFailure(error).code })))
  )

const describeFailure = (error: unknown): { readonly code: ExitCode; readonly message: string } => {
  const text = (e: unknown) => Predicate.hasProperty(e, "message") ? printable(String(e.message)) : printable(String(e))
  if (Predicate.isTagged(error, "SqlError")) {
    return {
      code: ExitCode.connectionLost,
      message: `cannot use the cluster's database: ${text(error)}${
        Predicate.hasProperty(error, "cause") && error.cause instanceof Error ? ` (${printable(error.cause.message)})` : ""
      }; check ${ENV_DATABASE_URL} or --database-url`
    }
  }
  if (Predicate.isTagged(error, "ClusterUnavailable")) {
    return {
      code: ExitCode.connectionLost,
      message: `no runner of the cluster answered within ${
        Duration.format(Duration.sum(clusterPatience, attemptTimeout))
      } (${text(error)}); is a runner started (effect-agent-session runner)?`
    }
  }
  if (Predicate.isTagged(error, "NoRunner")) {
    return {
      code: ExitCode.connectionLost,
      message: `no runner of the cluster is up (none in the cluster's database answered a ping within ${
        Duration.format(runnerPingTimeout)
      }): start one (effect-agent-session runner), then submit again; no session was created`
    }
  }
  if (Predicate.isTagged(error, "RunnerCheckFailed")) {
    return {
      code: ExitCode.connectionLost,
      message: `cannot read the cluster's runners: ${text(error)}; check ${ENV_DATABASE_URL} or --database-url; no session was created`
    }
  }
  if (Predicate.isTagged(error, "EventLogError")) {
    return { code: ExitCode.connectionLost, message: `the cluster's event log failed: ${text(error)}` }
  }
  if (Predicate.isTagged(error, "SessionNotFound")) return { code: ExitCode.usage, message: text(error) }
  if (Predicate.isTagged(error, "ClusterSecretError")) {
    return { code: ExitCode.usage, message: `the cluster secret: ${text(error)}` }
  }
  if (Predicate.isTagged(error, "SocketServerError")) {
    return { code: ExitCode.usage, message: `cannot listen for the other runners: ${text(error)}; check --port and --listen-host` }
  }
  return classify(error)
}

/**
 * The environment variable of the cluster's PostgreSQL URL.
 *
 * @since 0.1.0
 * @category models
 */
export const ENV_DATABASE_URL = NodeClusterSessions.DATABASE_URL_VARIABLE

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
  NodeClusterSessions.layerClient({ databaseUrl: url, maxConnections: 2, retry: commandRetry, attemptTimeout, notFoundAfter }).pipe(
    Layer.provide(NodeAgentSessions.layer({ baseUrl: "http://127.0.0.1", wsUrl: "ws://127.0.0.1" }))
  )

/**
 * The line that says another runner took the session over (a failover, a shard moved), when the
 * runner holding it changes from `previous` to `next`; nothing while the first holder is learnt
 * or while no runner holds it (between the death of one and the take-over by the next).
 *
 * @since 0.1.0
 * @category constructors
 */
export const takeoverNotice = (previous: Option.Option<string>, next: Option.Option<string>): Option.Option<string> =>
  Option.isSome(previous) && Option.isSome(next) && previous.value !== next.value
    ? Option.some(`runner ${printable(next.value)} took the session over (it was on ${printable(previous.value)})`)
    : Option.none()

/** How often `watch` and `submit` ask which runner holds the session, to show a take-over. */
const holderPollInterval = Duration.seconds(1)

/**
 * Prints a session's log from `fromSeq`, then live, until its run ends; then its end, with exit 7
 * when not complete. Meanwhile, a line when another runner takes the session over ({@link takeoverNotice}).
 */
const follow = (
  sessionId: string,
  fromSeq: number,
  onEvent: (logged: EventLog.LoggedEvent) => Effect.Effect<void> = () => Effect.void,
  holder: Option.Option<string> = Option.none()
) =>
  Effect.gen(function*() {
    const sessions = yield* ClusterSessions.ClusterSessions
    let held = holder
    yield* sessions.status(sessionId).pipe(
      Effect.flatMap((status) =>
        Effect.suspend(() => {
          const notice = takeoverNotice(held, status.runner)
          if (Option.isSome(status.runner)) held = status.runner
          return Option.match(notice, { onNone: () => Effect.void, onSome: println })
        })
      ),
      Effect.ignore,
      Effect.repeat(Schedule.spaced(holderPollInterval)),
      Effect.forkScoped
    )
    yield* sessions.events(sessionId, fromSeq).pipe(
      Stream.runForEach((logged) => {
        const wire = SessionEvent.toWire(logged.event)
        return Effect.zipRight(println(`#${logged.seq} ${printable(wire.event)} ${JSON.stringify(wire.payload)}`), onEvent(logged))
      })
    )
    const status = yield* sessions.status(sessionId)
    yield* println(`run: ${status.run}${Option.match(status.endReason, { onNone: () => "", onSome: (r) => ` (${printable(r)})` })}`)
    if (status.run !== "complete") return yield* new CliExit({ code: ExitCode.endedWithoutComplete })
  }).pipe(Effect.scoped)

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
      Options.withDescription(`The address to listen on, when it differs from --host (such as 0.0.0.0); beyond loopback, needs $${NodeClusterSessions.SECRET_VARIABLE}`),
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
        yield* Layer.build(RunnerLive).pipe(Effect.catchAll(reportFailure))
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
      yield* follow(flags.sessionId, flags.fromSeq).pipe(
        Effect.provide(clientLayer(url)),
        Effect.catchIf((error) => !Predicate.isTagged(error, "CliExit"), reportFailure)
      )
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
          `answered ${printable(SessionEvent.resourceTypeRaw(pending.resource_type))} (${printable(pending.action_session_id)}): ${
            flags.deny ? "deny" : "grant"
          }`
        )
      }).pipe(
        Effect.provide(clientLayer(url)),
        Effect.catchIf((error) => !Predicate.isTagged(error, "UsageError"), reportFailure)
      )
    })
).pipe(Command.withDescription("Answer a session's pending request from any machine of the cluster"))

/** How long a runner has to answer the ping of `submit`'s check, before the session is created. */
const runnerPingTimeout = Duration.seconds(3)

/**
 * Whether a runner of the cluster is up, checked before `submit` creates a (paid) session: the
 * runners the cluster's storage holds as healthy with a recent heartbeat, one of them answering a
 * ping within {@link runnerPingTimeout} (a killed runner's row outlives it by the lock expiry).
 * Without a runner the create would succeed and the hand-off fail a minute later.
 * `NodeClusterSessions.layerClient` holds the runners' storage (its type names the services of
 * the façade only): without it, the check is skipped.
 */
const runnerIsUp: Effect.Effect<boolean, RunnerCheckFailed, Runners.Runners> = Effect.gen(function*() {
  const storage = yield* Effect.serviceOption(RunnerStorage.RunnerStorage)
  if (Option.isNone(storage)) return true
  const listed = yield* storage.value.getRunners.pipe(
    Effect.mapError((error) => new RunnerCheckFailed({ message: error.message }))
  )
  const healthy = listed.filter(([, isHealthy]) => isHealthy).map(([runner]) => runner.address)
  if (healthy.length === 0) return false
  const runners = yield* Runners.Runners
  return yield* Effect.raceAll(healthy.map((address) => runners.ping(address).pipe(Effect.timeout(runnerPingTimeout)))).pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )
})

/** The runners could not be read from the cluster's database. */
class RunnerCheckFailed extends Data.TaggedError("RunnerCheckFailed")<{ readonly message: string }> {}

/** No runner is up: `submit` creates nothing. */
class NoRunner extends Data.TaggedError("NoRunner") {}

/**
 * The notice of a session that `submit` created and then stopped following (a failure, Ctrl-C):
 * it exists at the service (paid for) and may run on the cluster; `watch` follows it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createdNotice = (sessionId: string): string =>
  `session ${printable(sessionId)} was created at the service and may still be running on the cluster; follow it with: effect-agent-session watch ${
    shellQuote(sessionId)
  }`

/**
 * `submit`: creates a session at the service (one `POST`, from this process), hands it to the
 * cluster (a runner holds its channel from then on, and another one takes it over if that runner
 * dies), then prints its log as `watch` does until the run ends: exit 0 when it completed, 7 when
 * it ended without `complete`. A request for input or approval is answered with `answer` (from
 * here or any machine of the cluster). With `--detach`, prints the session id and returns.
 *
 * @since 0.1.0
 * @category constructors
 */
export const submit = Command.make(
  "submit",
  {
    ...CliConfig.connectionOptions,
    databaseUrl,
    goal: Options.text("goal").pipe(Options.withDescription("What the agent should achieve")),
    startUrl: Options.text("start-url").pipe(Options.withDescription("The absolute http(s) URL where the agent starts")),
    maxActions: Options.integer("max-actions").pipe(Options.withDescription("The most actions the agent may run (chargeable)")),
    detach: Options.boolean("detach").pipe(
      Options.withDescription("Print the session id once the cluster holds the session, and return")
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const url = yield* resolveDatabaseUrl(flags.databaseUrl)
      const connection = yield* CliConfig.resolve(flags)
      const ClientLive = NodeClusterSessions.layerClient({ databaseUrl: url, maxConnections: 2, retry: commandRetry, attemptTimeout, notFoundAfter }).pipe(
        Layer.provide(NodeAgentSessions.layer(CliConfig.layerOptions(connection)))
      )
      // The session once created (or named by a failed hand-off): named again if the command fails.
      let created: Option.Option<string> = Option.none()
      const noticeCreated = Effect.suspend(() =>
        Option.match(created, {
          onNone: () => Effect.void,
          onSome: (id) => Effect.sync(() => Render.processSink.err(`${createdNotice(id)}\n`))
        })
      )
      yield* Effect.gen(function*() {
        const sessions = yield* ClusterSessions.ClusterSessions
        if (!(yield* runnerIsUp)) {
          return yield* new NoRunner()
        }
        const session = yield* sessions.start({ goal: flags.goal, start_url: flags.startUrl, max_actions: flags.maxActions }).pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              // A failed hand-off: the session exists at the service.
              if (Predicate.isTagged(error, "ClusterUnavailable")) created = Option.some(error.sessionId)
            })
          )
        )
        const id = session.session_id
        created = Option.some(id)
        if (flags.detach) return yield* println(id)
        yield* println(`session ${printable(id)} runs on the cluster; follow it from anywhere with: effect-agent-session watch ${shellQuote(id)}`)
        // Which runner holds it (the one to stop, to see a failover), once its entity runs it.
        const holder = yield* sessions.status(id).pipe(
          Effect.map((status) => status.runner),
          Effect.filterOrFail(Option.isSome, () => "not yet"),
          Effect.retry(Schedule.spaced(Duration.millis(200)).pipe(Schedule.upTo(Duration.seconds(5)))),
          Effect.option,
          Effect.map(Option.flatten)
        )
        if (Option.isSome(holder)) yield* println(`held by runner ${printable(holder.value)}`)
        yield* follow(
          id,
          1,
          (logged) =>
            logged.event._tag === "ExternalResourceRequested"
              ? println(`  waiting for an answer: effect-agent-session answer ${shellQuote(id)} [--input <text> | --deny]`)
              : Effect.void,
          holder
        )
      }).pipe(
        Effect.provide(ClientLive),
        Effect.catchIf(
          (error) => !Predicate.isTagged(error, "CliExit"),
          (error) => reportFailure(error).pipe(Effect.tapError(() => noticeCreated))
        ),
        Effect.onInterrupt(() => noticeCreated)
      )
    })
).pipe(Command.withDescription("Create a session, hand it to the cluster, and follow it to its end"))
