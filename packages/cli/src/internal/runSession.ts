/**
 * The session loop of `run` and `attach` (`Run.runSession`): the reporter chosen for the output,
 * the session created (or attached to) with the SDK, its events and connection states reported,
 * its requests answered (`answerPolicy.ts`), and every failure reported with its exit code and,
 * for a session that may still be running, how to get it back.
 */
import type * as Prompt from "@effect/cli/Prompt"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { AgentSessions, type StartOptions } from "effect-agent-session/AgentSessions"
import type * as Credentials from "effect-agent-session/Credentials"
import * as Metrics from "effect-agent-session/Metrics"
import * as NodeAgentSessions from "effect-agent-session/NodeAgentSessions"
import { SessionId, SessionInfo } from "effect-agent-session/Session"
import * as CliConfig from "../Config.js"
import { classify, CliExit, ExitCode, UsageError, withDialectHint } from "../ExitCode.js"
import * as Record from "../Record.js"
import * as Render from "../Render.js"
import type { AnswerPolicy, Environment, RunFlags } from "./runTypes.js"
import { decide } from "./answerPolicy.js"

/** `Run.reconnectSchedule`: at most `attempts` attempts, 50 ms apart doubling up to 1 s. */
export const reconnectSchedule = (attempts: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.exponential(Duration.millis(50), 2).pipe(
    Schedule.modifyDelay((delay) => Duration.min(delay, Duration.seconds(1))),
    Schedule.intersect(Schedule.recurs(attempts)),
    Schedule.asVoid
  )

/** The budget guard given to the SDK for a session whose `max_actions` is not known: none. */
const UNKNOWN_MAX_ACTIONS = 2_147_483_647

/** The session of an error that says it may still be running at the service. */
const orphanOf = (error: unknown): Option.Option<string> =>
  Predicate.hasProperty(error, "sessionId") && Predicate.hasProperty(error, "mayStillBeRunning") &&
    typeof error.sessionId === "string" && error.mayStillBeRunning === true
    ? Option.some(error.sessionId)
    : Option.none()

/** `Run.runSession`: the session of the flags, in the environment; `existing`: attach to it. */
export const runSession = (
  flags: RunFlags,
  env: Environment,
  existing: Option.Option<string>
): Effect.Effect<void, CliExit, Prompt.Prompt.Environment> =>
  Effect.gen(function*() {
    const reporter = flags.json
      ? Render.json(env.sink, { statusNotes: env.stderrIsTTY })
      : env.stdoutIsTTY
      ? Render.live(env.sink, { color: env.color })
      : Render.plain(env.sink, { statusNotes: env.stderrIsTTY })
    const progress = Render.makeProgress(Option.getOrUndefined(flags.maxActions), { attached: Option.isSome(existing) })

    // The dialect in use, once resolved: a NotFound or Unauthorized before the session exists
    // hints at --dialect.
    let dialect: Option.Option<"documented" | "observed"> = Option.none()

    // Issue 13: a session that may still be running (and paid for) is named, with how to reattach;
    // a create request without its answer may have made one.
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
