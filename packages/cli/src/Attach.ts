/**
 * `effect-agent-session attach <session-id>`: reconnect to a session that already exists (one an
 * error or an interruption said may still be running) and show it like `run`.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import * as CliConfig from "./Config.js"
import * as Flags from "./Flags.js"
import * as Run from "./Run.js"

/**
 * The flags of `attach`: those of `run` that apply to a session that exists.
 *
 * @since 0.1.0
 * @category models
 */
export const attachOptions = {
  maxActions: Flags.integer("max-actions", { min: 1 }).pipe(
    Options.withDescription("The session's max_actions, for the budget guard and the bar (default: not checked)"),
    Options.optional
  ),
  agentKey: Run.runOptions.agentKey,
  approve: Run.runOptions.approve,
  deny: Run.runOptions.deny,
  input: Run.runOptions.input,
  json: Run.runOptions.json,
  metrics: Run.runOptions.metrics,
  maxReconnects: Run.runOptions.maxReconnects,
  record: Run.runOptions.record,
  sessionId: Args.text({ name: "session-id" }).pipe(Args.withDescription("The id of the session to watch")),
  ...CliConfig.connectionOptions
}

/**
 * The `attach` command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = Command.make("attach", attachOptions, ({ maxActions, sessionId, ...flags }) =>
  Run.runSession(
    {
      ...flags,
      goal: "",
      startUrl: "",
      maxActions,
      idempotencyKey: Option.none()
    },
    Run.processEnvironment(),
    Option.some(sessionId)
  )).pipe(
    Command.withDescription("Reconnect to a session that already exists and watch it like run")
  )
