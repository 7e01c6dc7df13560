/**
 * `effect-agent-session run`: create a session, show it live, answer its requests, print the
 * outcome and the cost.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Prompt from "@effect/cli/Prompt"
import type * as Terminal from "@effect/platform/Terminal"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentSessions, type StartOptions } from "effect-agent-session/AgentSessions"
import * as Answer from "effect-agent-session/Answer"
import type * as Credentials from "effect-agent-session/Credentials"
import * as Metrics from "effect-agent-session/Metrics"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import { SessionId, SessionInfo } from "effect-agent-session/Session"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import * as CliConfig from "./Config.js"
import * as Flags from "./Flags.js"
import { classify, CliExit, ExitCode, UsageError, withDialectHint } from "./ExitCode.js"
import * as Record from "./Record.js"
import * as Render from "./Render.js"
import * as Sanitize from "./Sanitize.js"

/**
 * The flags of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export const runOptions = {
  goal: Flags.nonEmpty("goal").pipe(Options.withDescription("What the agent should achieve")),
  startUrl: Flags.url("start-url", ["http:", "https:"]).pipe(
    Options.withDescription("The absolute http(s) URL where the agent starts")
  ),
  maxActions: Flags.integer("max-actions", { min: 1 }).pipe(
    Options.withDescription("The most actions the agent may run (chargeable); the bar counts against it")
  ),
  agentKey: Options.redacted("agent-key").pipe(
    Options.withDescription(
      `Run as an onboarded agent, with its key (default: $${CliConfig.Env.agentKey}); else the account key is used`
    ),
    Options.optional
  ),
  approve: Options.boolean("approve").pipe(
    Options.withDescription("Grant every request of the agent without asking (input requests get --input, if given)")
  ),
  deny: Options.boolean("deny").pipe(Options.withDescription("Deny every request of the agent without asking")),
  input: Options.text("input").pipe(
    Options.withDescription("Answer the agent's input requests with this text without asking"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("One JSON object per line (NDJSON) on standard output")),
  metrics: Options.boolean("metrics").pipe(Options.withDescription("Print a summary of the SDK's metrics at the end")),
  maxReconnects: Flags.integer("max-reconnects", { min: 0 }).pipe(
    Options.withDescription(
      "Advanced: reconnect at most this many times in a row, 50 ms apart doubling up to 1 s (default: 10, from 250 ms up to 10 s)"
    ),
    Options.optional
  ),
  idempotencyKey: Options.text("idempotency-key").pipe(
    Options.withDescription(
      "The Idempotency-Key of the create request (default: a fresh one); the key a notice printed gets that session back from a service that honours it"
    ),
    Options.optional
  ),
  record: Record.recordOption,
  ...CliConfig.connectionOptions
}

/**
 * The parsed flags of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunFlags extends CliConfig.ConnectionFlags {
  readonly goal: string
  readonly startUrl: string
  /** The session's `max_actions`; `attach` may not know it (no budget guard, no bar). */
  readonly maxActions: Option.Option<number>
  readonly agentKey: Option.Option<Redacted.Redacted<string>>
  readonly approve: boolean
  readonly deny: boolean
  readonly input: Option.Option<string>
  readonly json: boolean
  readonly metrics: boolean
  readonly maxReconnects: Option.Option<number>
  /** `run`: the create request's `Idempotency-Key` (default: a fresh random one). */
  readonly idempotencyKey: Option.Option<string>
  /** `--record FILE`: the session recorded to this file. */
  readonly record: Option.Option<string>
}

/**
 * How the agent's requests are answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerPolicy {
  readonly approve: boolean
  readonly deny: boolean
  readonly input: Option.Option<string>
  /** Whether a person can be asked (standard input and output are terminals, not `--json`). */
  readonly interactive: boolean
}

/**
 * Decides the answer to a request: flags first, then a prompt on a terminal, else deny.
 *
 * - `--deny` denies everything.
 * - `request_user_input`: `--input` grants with that text; `--approve` grants without input;
 *   on a terminal, a text prompt (empty denies); otherwise deny.
 * - `admin_permission_request` (and unknown kinds): `--approve` grants (with `--input`, if
 *   given); on a terminal, a yes/no prompt; otherwise deny.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decide = (
  policy: AnswerPolicy,
  request: SessionEvent.ExternalResourceRequested
): Effect.Effect<
  { readonly answer: Answer.Answer; readonly source: Render.AnswerSource },
  Terminal.QuitException,
  Prompt.Prompt.Environment
> => {
  const flag = (answer: Answer.Answer) => Effect.succeed({ answer, source: "flag" as const })
  if (policy.deny) return flag(Answer.deny())
  const kind = SessionEvent.resourceTypeRaw(request.resource_type)
  if (kind === "request_user_input") {
    if (Option.isSome(policy.input)) return flag(Answer.grant(policy.input.value))
    if (policy.approve) return flag(Answer.grant())
    if (policy.interactive) {
      // The prompt writes to the terminal itself: the service's text in it is made safe first.
      const field = Sanitize.line(Option.getOrElse(request.field_name, () => "input"))
      return Effect.map(
        Prompt.run(Prompt.text({ message: `${field} (empty to deny)` })),
        (text) => ({ answer: text.length === 0 ? Answer.deny() : Answer.grant(text), source: "prompt" as const })
      )
    }
    return Effect.succeed({ answer: Answer.deny(), source: "no-terminal" as const })
  }
  if (policy.approve) return flag(Option.isSome(policy.input) ? Answer.grant(policy.input.value) : Answer.grant())
  if (policy.interactive) {
    return Effect.map(
      Prompt.run(
        Prompt.confirm({
          message: `Allow ${kind === "admin_permission_request" ? "this" : Sanitize.line(kind)} request?`,
          initial: false
        })
      ),
      (yes) => ({ answer: yes ? Answer.grant() : Answer.deny(), source: "prompt" as const })
    )
  }
  return Effect.succeed({ answer: Answer.deny(), source: "no-terminal" as const })
}

/**
 * The reconnect schedule of `--max-reconnects N`: at most N attempts, 50 ms apart doubling up
 * to 1 s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reconnectSchedule = (attempts: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.exponential(Duration.millis(50), 2).pipe(
    Schedule.modifyDelay((delay) => Duration.min(delay, Duration.seconds(1))),
    Schedule.intersect(Schedule.recurs(attempts)),
    Schedule.asVoid
  )

/**
 * Where `run` writes, and whether it may draw live or prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly sink: Render.Sink
  readonly stdoutIsTTY: boolean
  readonly stdinIsTTY: boolean
  /** Whether a person watches standard error: the notes of what the command waits for go there. */
  readonly stderrIsTTY: boolean
  readonly color: boolean
}

/**
 * The process's own environment.
 *
 * @since 0.1.0
 * @category constructors
 */
export const processEnvironment = (): Environment => ({
  sink: Render.processSink,
  stdoutIsTTY: process.stdout.isTTY === true,
  stdinIsTTY: process.stdin.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  color: process.env["NO_COLOR"] === undefined || process.env["NO_COLOR"] === ""
})

/** The budget guard given to the SDK for a session whose `max_actions` is not known: none. */
const UNKNOWN_MAX_ACTIONS = 2_147_483_647

/** The session of an error that says it may still be running at the service (issue 13). */
const orphanOf = (error: unknown): Option.Option<string> =>
  Predicate.hasProperty(error, "sessionId") && Predicate.hasProperty(error, "mayStillBeRunning") &&
    typeof error.sessionId === "string" && error.mayStillBeRunning === true
    ? Option.some(error.sessionId)
    : Option.none()

/**
 * Runs a session for the flags; fails with {@link CliExit} carrying the exit code after
 * reporting. Interruption (Ctrl-C) closes the connection and prints what was done so far; while
 * the create request waits for its answer, it says that a session may exist and prints the
 * `Idempotency-Key` that gets it back.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runSession = (
  flags: RunFlags,
  env: Environment = processEnvironment(),
  /** Watch this existing session (`attach`) instead of creating one. */
  existing: Option.Option<string> = Option.none()
): Effect.Effect<void, CliExit, Prompt.Prompt.Environment> =>
  Effect.gen(function*() {
    const reporter = flags.json
      ? Render.json(env.sink, { statusNotes: env.stderrIsTTY })
      : env.stdoutIsTTY
      ? Render.live(env.sink, { color: env.color })
      : Render.plain(env.sink, { statusNotes: env.stderrIsTTY })
    const progress = Render.makeProgress(Option.getOrUndefined(flags.maxActions))

    // The dialect in use, once resolved: a NotFound or Unauthorized before the session exists
    // hints at --dialect.
    let dialect: Option.Option<"documented" | "observed"> = Option.none()

    // Issue 13: a session that may still be running (and paid for) is named, with how to reattach;
    // a create request without its answer may have made one (issue 20).
    const notice = (text: string) => Effect.sync(() => env.sink.err(`${text}\n`))
    const orphanOfProgress = Effect.suspend(() =>
      Option.isSome(progress.creating)
        ? notice(Render.createNotice(progress.creating.value))
        : Option.match(progress.sessionId, {
          onNone: () => Effect.void,
          onSome: (id) => notice(Render.orphanNotice(id, progress.maxActions))
        })
    )

    const report = (error: unknown) =>
      Effect.gen(function*() {
        const classified = classify(error)
        const code = classified.code
        const message = Option.isSome(dialect) && Option.isNone(progress.sessionId)
          ? withDialectHint(error, classified.message, dialect.value)
          : classified.message
        const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
        if (code === ExitCode.interrupted) {
          yield* reporter.interrupted(progress)
          yield* orphanOfProgress
        } else {
          yield* reporter.failure(message, tag, code, progress)
          const orphan = orphanOf(error)
          const ended = Predicate.hasProperty(error, "mayStillBeRunning") && error.mayStillBeRunning === false
          yield* Option.isSome(orphan)
            ? notice(Render.orphanNotice(orphan.value, progress.maxActions))
            : ended
            ? Effect.void
            : orphanOfProgress
        }
        yield* printMetrics
        return yield* Effect.fail(new CliExit({ code }))
      })

    const printMetrics = flags.metrics
      ? Effect.flatMap(Metrics.snapshot, reporter.metrics)
      : Effect.void

    const program = Effect.gen(function*() {
      if (flags.approve && flags.deny) {
        return yield* new UsageError({ message: "--approve and --deny cannot be used together" })
      }
      const agentKey = yield* CliConfig.secretOrEnv(flags.agentKey, CliConfig.Env.agentKey)
      const apiKey = yield* CliConfig.secretOrEnv(flags.apiKey, CliConfig.Env.apiKey)
      if (Option.isNone(agentKey) && Option.isNone(apiKey)) {
        return yield* new UsageError({
          message: `no API key: set ${CliConfig.Env.apiKey} (or ${CliConfig.Env.agentKey}), or pass --api-key / --agent-key`
        })
      }
      yield* Record.check(flags.record)
      const connection = yield* CliConfig.resolve({ ...flags, apiKey: apiKey })
      dialect = Option.some(connection.dialect)
      const agent: Option.Option<Credentials.AgentKeyRef> = Option.map(
        agentKey,
        (key) => ({ agentId: "cli-agent", apiKey: Option.some(key) })
      )

      const policy: AnswerPolicy = {
        approve: flags.approve,
        deny: flags.deny,
        input: flags.input,
        interactive: !flags.json && env.stdinIsTTY && env.stdoutIsTTY
      }

      // The create request's key, known before it is sent: an interruption while it waits for
      // its answer can then name the key that gets the session back.
      const idempotencyKey = Option.getOrElse(flags.idempotencyKey, () => globalThis.crypto.randomUUID())
      const options: StartOptions = {
        ...(Option.isSome(agent) ? { agent: agent.value } : {}),
        ...(Option.isSome(flags.maxReconnects) ? { reconnect: reconnectSchedule(flags.maxReconnects.value) } : {}),
        idempotencyKey
      }

      const session = Effect.scoped(
        Effect.gen(function*() {
          const sessions = yield* AgentSessions
          const running = yield* Option.match(existing, {
            onNone: () =>
              Effect.zipRight(
                Effect.zipRight(
                  reporter.status(`creating session at ${connection.baseUrl}...`, progress),
                  Effect.sync(() => {
                    progress.creating = Option.some(idempotencyKey)
                  })
                ),
                sessions.start(
                  {
                    goal: flags.goal,
                    start_url: flags.startUrl,
                    max_actions: Option.getOrElse(flags.maxActions, () => UNKNOWN_MAX_ACTIONS)
                  },
                  options
                ).pipe(
                  // Answered (a session or an error): nothing waits any more. Interrupted: the
                  // request stays unanswered, and its key is kept for the notice.
                  Effect.onExit((exit) =>
                    Effect.sync(() => {
                      if (!Exit.isInterrupted(exit)) progress.creating = Option.none()
                    })
                  )
                )
              ),
            onSome: (id) =>
              sessions.attach(
                new SessionInfo({
                  session_id: SessionId.make(id),
                  status: Option.none(),
                  start_time: Option.none(),
                  end_time: Option.none(),
                  error: Option.none()
                }),
                Option.getOrElse(flags.maxActions, () => UNKNOWN_MAX_ACTIONS),
                options
              )
          })
          progress.sessionId = Option.some(running.session.session_id)
          yield* reporter.created(running.session.session_id, progress)
          yield* reporter.status("connecting to the event channel...", progress)
          yield* running.state.changes.pipe(
            Stream.runForEach((state) =>
              Render.trackState(progress, state) ? reporter.state(state, progress) : Effect.void
            ),
            Effect.forkScoped
          )
          yield* Stream.runForEach(running.events, (event) =>
            Effect.gen(function*() {
              Render.track(progress, event)
              yield* reporter.event(event, progress)
              if (event._tag === "ExternalResourceRequested") {
                const { answer, source } = yield* reporter.suspend(decide(policy, event))
                yield* running.respond(event, answer).pipe(
                  Effect.tap(() => {
                    progress.answers += 1
                    return reporter.answered(event, answer, source, progress)
                  }),
                  Effect.catchTag("RequestNotPending", (e) => reporter.note(`not answered: ${e.message}`, progress))
                )
              }
            }))
          return yield* running.outcome
        })
      )

      const outcome = yield* session.pipe(
        Effect.ensuring(Record.finish(env.sink)),
        Effect.provide(Record.layer(
          NodeAgentSessions.layer(
            CliConfig.layerOptions(connection, Option.isSome(agent) ? { agents: [agent.value] } : {})
          ),
          flags.record
        ))
      )
      yield* reporter.outcome(outcome, progress)
      yield* printMetrics
    })

    return yield* program.pipe(
      Effect.catchAll(report),
      Effect.onInterrupt(() => Effect.zipRight(Effect.zipRight(reporter.interrupted(progress), orphanOfProgress), printMetrics))
    )
  })

/**
 * The `run` command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("run", runOptions, (flags) =>
  runSession({ ...flags, maxActions: Option.some(flags.maxActions) })).pipe(
  Command.withDescription("Run a session against the service and watch it live")
)
