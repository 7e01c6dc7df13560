/**
 * The help of the command line, written for people: a sentence per command and flag, examples,
 * and the exit codes. `effect-agent-session --help`, `effect-agent-session <command> --help`;
 * with no arguments the root help goes to standard error and the exit code is 2.
 *
 * @since 0.1.0
 */
// No import of ExitCode.ts (it loads the SDK's errors): the help is answered before anything
// loads (Quick.ts). A test keeps this table equal to ExitCode.
const exitCodes = `Exit codes:
  0    the session completed (or the command succeeded)
  1    an unexpected failure (a bug: please report it)
  2    usage: a bad or missing flag, a missing key or URL, invalid input
  3    authentication: the key was refused
  4    rate limited, still after the retries
  5    connection lost: the service could not be reached, the event channel never opened,
       or the reconnects ran out
  6    the agent ran more actions than --max-actions
  7    the session ended without complete
  8    any other error of the service or the event channel
  9    onboard: the agent was registered but --save-key could not write its key (printed instead)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM)`

const connection = `Connection (each flag, else its environment variable):
  --base-url <url>        The service's HTTP base URL ($AGENT_SESSION_BASE_URL; required).
  --ws-url <url>          The WebSocket base URL ($AGENT_SESSION_WS_URL; default: the base URL
                          with ws:// or wss://).
  --api-key <key>         The account key ($AGENT_SESSION_API_KEY; prefer the variable: flags
                          show in ps).
  --dialect <name>        documented (default) or observed, how the service's own client talks
                          ($AGENT_SESSION_DIALECT). Try the other one when the first request
                          answers 404 or 401.
  --transport <name>      websocket (default) or sse, the observed client's Server-Sent Events
                          at the base URL ($AGENT_SESSION_TRANSPORT).
  --allow-insecure        Allow plain http:// and ws:// to a host that is not loopback (the key
                          then travels in clear).`

const common = `Everywhere:
  --log-level <level>     Show the SDK's own logs on standard error: all, trace, debug, info,
                          warning (default), error, fatal or none ($EFFECT_LOG_LEVEL). Accepted
                          anywhere on the line.
  -h, --help              This help.`

/**
 * The help of each command, and of the command line itself (`""`).
 *
 * @since 0.1.0
 * @category models
 */
export const texts: Readonly<Record<string, string>> = {
  "": `effect-agent-session: run agent sessions from the terminal, against the service or its simulator.

Usage:
  effect-agent-session <command> [flags]
  effect-agent-session <command> --help
  effect-agent-session --version

Commands:
  run         Create a session, show it live, answer the agent's requests, print the outcome
              and its cost.
  attach      Watch a session that already exists (one an error said may still be running),
              like run.
  simulate    Start the reference simulator of the service on this machine and print its
              address and account key.
  onboard     Register an agent with the service and print it (its key only when asked).
  runner      Join a cluster of runners (PostgreSQL) and run sessions until interrupted.
  submit      Create a session, hand it to a cluster, and follow it to its end.
  watch       Follow a session's log from any machine of a cluster.
  answer      Answer a session's pending request from any machine of a cluster.

Examples:
  effect-agent-session simulate --port 8787
  export AGENT_SESSION_BASE_URL=http://127.0.0.1:8787 AGENT_SESSION_API_KEY=sim-account-key
  effect-agent-session run --goal "Find the pricing page" --start-url https://example.com --max-actions 5

${common}

${exitCodes}

More: docs/cli.md in the effect-agent-session repository.
`,
  run: `effect-agent-session run: create a session, show it live, answer the agent's requests, and
print the outcome and its cost.

Usage:
  effect-agent-session run --goal <text> --start-url <url> --max-actions <n> [flags]

Session:
  --goal <text>           What the agent should achieve (not empty).
  --start-url <url>       Where the agent starts: an absolute http:// or https:// URL.
  --max-actions <n>       The most actions the agent may run (chargeable), at least 1; the bar
                          counts against it, and the run stops past it (exit 6).
  --agent-key <key>       Run as an onboarded agent, with its key ($AGENT_SESSION_AGENT_KEY);
                          else the account key is used.
  --idempotency-key <key> The Idempotency-Key of the create request (default: a fresh one). Give
                          the key that a notice printed ("a session may have been created") to
                          get that session back from a service that honours the key.

Answers to the agent's requests (else a prompt on a terminal, else deny):
  --approve               Grant every request without asking (input requests get --input).
  --deny                  Deny every request without asking.
  --input <text>          Answer input requests with this text without asking.

Output:
  --json                  One JSON object per line (NDJSON) on standard output.
  --metrics               Print a summary of the SDK's metrics at the end.
  --max-reconnects <n>    Reconnect at most n times in a row, 50 ms apart doubling up to 1 s
                          (default: 10 times, from 250 ms up to 10 s).
  --record <file>         Record the session to this file (JSON Lines, no key in it), to replay
                          it in tests or with simulate --replay (docs/testing.md).

${connection}

${common}

Examples:
  effect-agent-session run --goal "Find the pricing page" --start-url https://example.com --max-actions 5
  effect-agent-session run --goal "Sign up" --start-url https://example.com --max-actions 8 --input jane@example.com
  effect-agent-session run --goal "Read the title" --start-url https://example.com --max-actions 3 --deny --json | jq .

${exitCodes}
`,
  attach: `effect-agent-session attach: watch a session that already exists, like run (answer its
requests, print the outcome and its cost). Use it with the id that an error or Ctrl-C printed
("session <id> may still be running at the service").

Usage:
  effect-agent-session attach <session-id> [flags]

Session:
  <session-id>            The id of the session to watch.
  --max-actions <n>       The session's max_actions, for the bar and the budget guard (default:
                          not checked).
  --agent-key <key>       Watch as an onboarded agent, with its key ($AGENT_SESSION_AGENT_KEY).

Answers and output: --approve, --deny, --input <text>, --json, --metrics,
--max-reconnects <n> and --record <file>, as for run.

${connection}

${common}

Examples:
  effect-agent-session attach ses_UqaPLuyA6MfcvqOp
  effect-agent-session attach ses_UqaPLuyA6MfcvqOp --max-actions 5 --deny --json

${exitCodes}
`,
  runner: `effect-agent-session runner: join a cluster of runners (sessions as @effect/cluster
entities, their event log in PostgreSQL) and run sessions until interrupted. See docs/scale-out.md.

Usage:
  effect-agent-session runner [flags]

Cluster:
  --database-url <url>    The cluster's PostgreSQL URL (default: $CLUSTER_DATABASE_URL; prefer the
                          variable: flags show in ps).
  --host <address>        The address the other members reach this runner at (default 127.0.0.1).
  --port <n>              The runner's port (default 34431).
  --listen-host <addr>    The address to listen on, when it differs from --host (such as 0.0.0.0).
                          Beyond loopback, a runner needs the cluster secret.

  Every member (runner, submit, watch, answer) proves the cluster secret of $CLUSTER_SECRET
  (previous ones still accepted during a rotation: $CLUSTER_SECRETS_PREVIOUS, comma-separated).

${connection}

${common}

Examples:
  CLUSTER_SECRET=... CLUSTER_DATABASE_URL=postgres://app@db/sessions effect-agent-session runner --host 10.0.0.5 --port 34431

${exitCodes}
`,
  submit: `effect-agent-session submit: create a session at the service, hand it to a cluster of
runners (one of them holds its channel; another takes it over if that one dies), then print its
log (#seq event payload) until its run ends. Exit 0 when it completed, 7 when it ended without
complete; 5 when the database or no runner can be reached (no runner up: checked before the
session is created, so nothing is created). Answer its requests with answer.

Usage:
  effect-agent-session submit --goal <text> --start-url <url> --max-actions <n> [--detach] [flags]

  --goal <text>           What the agent should achieve.
  --start-url <url>       The absolute http(s) URL where the agent starts.
  --max-actions <n>       The most actions the agent may run (chargeable).
  --detach                Print the session id once the cluster holds the session, and return.
  --database-url <url>    The cluster's PostgreSQL URL (default: $CLUSTER_DATABASE_URL).
                          The cluster secret: $CLUSTER_SECRET (as the runners have it).

${connection}

${common}

Examples:
  effect-agent-session submit --goal "Find the pricing page" --start-url https://example.com --max-actions 5

${exitCodes}
`,
  watch: `effect-agent-session watch: print a session's log (#seq event payload) from any machine of a
cluster, from --from-seq, then live, until its run ends. Exit 0 when it completed, 7 when it ended
without complete, 2 when the cluster has no such session, 5 when the database or no runner can be
reached.

Usage:
  effect-agent-session watch <sessionId> [--from-seq <n>] [--database-url <url>]

  --from-seq <n>          The first sequence number to print (default 1).
  --database-url <url>    The cluster's PostgreSQL URL (default: $CLUSTER_DATABASE_URL).
                          The cluster secret: $CLUSTER_SECRET (as the runners have it).

${common}

Examples:
  effect-agent-session watch ses_UqaPLuyA6MfcvqOp --from-seq 10

${exitCodes}
`,
  answer: `effect-agent-session answer: answer a session's pending request from any machine of a
cluster (the first pending one, or the one of --request): a grant, with --input, or --deny.

Usage:
  effect-agent-session answer <sessionId> [--request <id>] [--input <text> | --deny] [--database-url <url>]

  --request <id>          The action_session_id of the request (default: the first pending one).
  --input <text>          The input to grant with.
  --deny                  Deny the request instead of granting it.
  --database-url <url>    The cluster's PostgreSQL URL (default: $CLUSTER_DATABASE_URL).
                          The cluster secret: $CLUSTER_SECRET (as the runners have it).

${common}

Examples:
  effect-agent-session answer ses_UqaPLuyA6MfcvqOp --input jane@example.com
  effect-agent-session answer ses_UqaPLuyA6MfcvqOp --deny

${exitCodes}
`,
  simulate: `effect-agent-session simulate: start the reference simulator of the service and print its
address and account key; it runs until Ctrl-C or SIGTERM.

Usage:
  effect-agent-session simulate [flags]

Flags:
  --port <n>              The port to listen on (default 8787); 0 picks a free one.
  --host <address>        The address to listen on (default 127.0.0.1). With 0.0.0.0 or ::
                          (every interface) the printed URLs use loopback.
  --dialect <name>        The wire dialect the simulator speaks: documented (default) or observed.
  --actions <n>           The actions the scripted agent wants to run (default 5; never more
                          than the session's max_actions).
  --ask <what>            What the agent asks in the middle of its run: none, input or
                          permission (default).
  --frame-delay <ms>      Milliseconds before each event (default 300, slow enough to watch).
  --account-key <key>     The account key the simulator accepts (default sim-account-key on
                          loopback; listening beyond loopback, such as on 0.0.0.0, a random key,
                          printed: whoever reaches the port with the well-known key would be the
                          account).
  --fault <fault>         A fault to inject; repeatable: drop-after=N[,M...], malformed-at=N,
                          unknown-event-at=N, stall-after=N:MS, oversize-at=N:BYTES,
                          exceed-max-actions=N, close-before-complete, reject-handshake,
                          replay-on-reconnect=N, fail-503=N, rate-limit=N[:SECONDS],
                          http-delay=MS.
  --json                  Print the address as one JSON object (for scripts).
  --replay <file>         Serve this recorded session (run --record) instead of the scripted
                          agent, in its recorded dialect, over WebSocket and SSE; each client's
                          answers are checked against the recorded ones (docs/testing.md).
  --speed <n>             With --replay: the recorded delays divided by n (default 1).

${common}

Examples:
  effect-agent-session simulate
  effect-agent-session simulate --port 0 --json
  effect-agent-session simulate --dialect observed --ask input --fault drop-after=3
  effect-agent-session simulate --replay session.jsonl --speed 10

${exitCodes}
`,
  onboard: `effect-agent-session onboard: register an agent with the service (with the account key)
and print it. The service returns the agent's key only once: --save-key <file> or --show-key
is required, so that it is never lost.

Usage:
  effect-agent-session onboard --name <name> --website <url> --domain <domain> [flags]

Agent:
  --name <name>           The agent's name (unique in the account).
  --website <url>         The agent's website: an absolute http:// or https:// URL.
  --domain <domain>       sales, marketing, research, automation or podcasting.
  --show-key              Print the agent's key.
  --save-key <file>       Write the agent's key to a new file with mode 0600, created before the
                          agent is registered (never overwrites; a file that cannot be created
                          stops the command before anything is sent). Should writing still fail,
                          the key is printed instead (exit 9).
  --json                  Print the agent as one JSON object.

${connection}

${common}

Examples:
  effect-agent-session onboard --name demo --website https://example.com --domain research --save-key ./demo.key

${exitCodes}
`
}

/**
 * The help of a command (`""` for the command line itself), if it has one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const forCommand = (name: string): string | undefined => texts[name]
