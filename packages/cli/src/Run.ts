/**
 * `effect-agent-session run`: create a session, show it live, answer its requests, print the
 * outcome and the cost.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as Prompt from "@effect/cli/Prompt"
import type * as Terminal from "@effect/platform/Terminal"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import type * as Answer from "effect-agent-session/Answer"
import type * as SessionEvent from "effect-agent-session/SessionEvent"
import * as CliConfig from "./Config.js"
import type { CliExit } from "./ExitCode.js"
import * as Flags from "./Flags.js"
import * as answerPolicy from "./internal/answerPolicy.js"
import * as internal from "./internal/runSession.js"
import type { AnswerPolicy, Environment, RunFlags } from "./internal/runTypes.js"
import * as Record from "./Record.js"
import * as Render from "./Render.js"

export type {
  /**
   * The parsed flags of `run`.
   *
   * @since 0.1.0
   * @category models
   */
  RunFlags,
  /**
   * How the agent's requests are answered.
   *
   * @since 0.1.0
   * @category models
   */
  AnswerPolicy,
  /**
   * Where `run` writes, and whether it may draw live or prompt.
   *
   * @since 0.1.0
   * @category models
   */
  Environment
} from "./internal/runTypes.js"

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
export const decide: (
  policy: AnswerPolicy,
  request: SessionEvent.ExternalResourceRequested
) => Effect.Effect<
  { readonly answer: Answer.Answer; readonly source: Render.AnswerSource },
  Terminal.QuitException,
  Prompt.Prompt.Environment
> = answerPolicy.decide

/**
 * The reconnect schedule of `--max-reconnects N`: at most N attempts, 50 ms apart doubling up
 * to 1 s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reconnectSchedule: (attempts: number) => Schedule.Schedule<unknown, unknown> = internal.reconnectSchedule

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
  internal.runSession(flags, env, existing)

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
