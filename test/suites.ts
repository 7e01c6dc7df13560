/**
 * Which test files make the fast inner loop (`npm run test:fast`, vitest.fast.config.ts) and which
 * are left to the whole suite (`npm test` runs both). Every test file the suite runs is in exactly
 * one of the two lists (test/suites.test.ts fails otherwise), so a new file is classified when it
 * is added: fast if it runs in process with no socket, child process, database or package build.
 *
 * An entry is a file, or a folder ending with `/` for every test file under it.
 */

/** Unit and layer tests: in process, stub services, `TestClock`; no socket, child process or database. */
export const fast: ReadonlyArray<string> = [
  "examples/testing-your-app.test.ts",
  "packages/cli/test/exitCodes.test.ts",
  "packages/cli/test/render.test.ts",
  "packages/cli/test/sanitize.test.ts",
  "packages/core/test/",
  "packages/shell/test/",
  "packages/effect3/test/AgentApi.timeout.test.ts",
  "packages/effect3/test/AgentSessions.fibers.test.ts",
  "packages/effect3/test/AgentSessions.pinned.test.ts",
  "packages/effect3/test/Errors.channels.test.ts",
  "packages/effect3/test/Errors.test.ts",
  // test/shared/ file by file: some of its files are slow (listed below).
  "packages/effect3/test/shared/AgentApi.createPolicy.test.ts",
  "packages/effect3/test/shared/AgentApi.pinned.test.ts",
  "packages/effect3/test/shared/AgentApi.test.ts",
  "packages/effect3/test/shared/AgentSessions.test.ts",
  "packages/effect3/test/shared/Credentials.test.ts",
  "packages/effect3/test/shared/Dialect.test.ts",
  "packages/effect3/test/shared/Errors.channels.test.ts",
  "packages/effect3/test/shared/Errors.test.ts",
  "packages/effect3/test/shared/EventStream.buffer.test.ts",
  "packages/effect3/test/shared/EventStream.drain.test.ts",
  "packages/effect3/test/shared/EventStream.test.ts",
  "packages/effect3/test/shared/FetchAgentSessions.test.ts",
  "packages/effect3/test/shared/Metrics.test.ts",
  "packages/effect3/test/shared/Schemas.test.ts",
  "packages/effect3/test/shared/ServiceApi.test.ts",
  "packages/effect3/test/shared/SessionEvent.test.ts",
  "packages/effect3/test/shared/conformance.test.ts",
  "packages/effect3/test/shared/replay.test.ts",
  "packages/effect3/test/EventStream.hostile.test.ts",
  "packages/effect3/test/EventStream.pinned.test.ts",
  "packages/effect3/test/ServiceApi.test.ts",
  "packages/effect3/test/SessionEvent.test.ts",
  "packages/effect3/test/Sse.pinned.test.ts",
  "packages/effect3/test/Wire.test.ts",
  "test/docs.test.ts",
  "test/suites.test.ts",
  "packages/effect3/test/channel/buffer.test.ts",
  "packages/effect3/test/channel/deadlines.test.ts",
  "packages/effect3/test/channel/engine.test.ts",
  "packages/effect3/test/channel/loop.test.ts",
  "packages/effect3/test/channel/settings.test.ts",
  "packages/effect3/test/channel/socket.test.ts",
  "packages/cluster/test/gate.test.ts",
  "packages/cluster/test/shared/answerWatch.test.ts",
  "packages/cluster/test/shared/eventsStream.test.ts",
  "packages/cluster/test/shared/gate.test.ts",
  "packages/cluster/test/shared/membership.test.ts",
  "packages/cluster/test/shared/watchPeers.test.ts",
  "packages/simulator/test/Idempotency.test.ts",
  "packages/simulator/test/Script.test.ts"
]

/** The rest, each with why it is not in the fast loop. */
export const slow: ReadonlyArray<{ readonly path: string; readonly why: string }> = [
  { path: "examples/replay-a-recording.test.ts", why: "replays a recording over real sockets too" },
  { path: "packages/effect3/test/Metrics.test.ts", why: "sessions against the simulator over real sockets" },
  { path: "packages/effect3/test/NodeAgentSessions.test.ts", why: "the Node layer against the simulator over real sockets" },
  { path: "packages/effect3/test/Recording.test.ts", why: "sessions recorded from the simulator over real sockets" },
  { path: "test/bench.test.ts", why: "runs the benchmark harness's processes and the start-up bench" },
  { path: "test/docs-commands.test.ts", why: "runs the docs' commands as child processes against the simulator" },
  { path: "test/scale-out.test.ts", why: "runs the scale-out walk-through: PostgreSQL, the simulator, three runners and the cluster commands as child processes" },
  { path: "test/docs-examples.test.ts", why: "type-checks every example with tsc (a child process)" },
  { path: "test/docs.links.test.ts", why: "builds the API reference with typedoc (a child process)" },
  { path: "test/docs-programs.test.ts", why: "runs the docs' programs against the simulator, some as child processes" },
  { path: "test/examples.test.ts", why: "runs examples/ as child processes against the simulator" },
  { path: "test/package.test.ts", why: "lists the tarballs with npm pack (a child process)" },
  { path: "packages/effect3/test/conformance.test.ts", why: "the conformance scenarios against the simulator over real sockets" },
  { path: "packages/effect3/test/channel/fibers.test.ts", why: "counts fibers of sessions open over real sockets" },
  { path: "packages/cli/test/cluster.test.ts", why: "the command line as child processes, PostgreSQL" },
  { path: "packages/cli/test/create.test.ts", why: "the command line as child processes against scripted services and the simulator" },
  { path: "packages/cli/test/hostile.test.ts", why: "the command line as child processes against a hostile service; sh reads shell words" },
  { path: "packages/cli/test/interactive.test.ts", why: "the command line against the simulator over real sockets" },
  { path: "packages/cli/test/onboard.test.ts", why: "the command line against the simulator over real sockets" },
  { path: "packages/cli/test/paid.test.ts", why: "the command line against the simulator over real sockets" },
  { path: "packages/cli/test/polish.test.ts", why: "the command line as child processes" },
  { path: "packages/cli/test/record.test.ts", why: "the command line as child processes against the simulator" },
  { path: "packages/cli/test/run.test.ts", why: "the command line as child processes against the simulator" },
  { path: "packages/cli/test/simulate.test.ts", why: "simulate as a child process" },
  { path: "packages/cli/test/startup.test.ts", why: "the command line as child processes" },
  { path: "packages/cluster/test/shared/authSocket.test.ts", why: "the runner transport's handshake over real sockets" },
  { path: "packages/cluster/test/shared/auth.test.ts", why: "a runner on PostgreSQL, members and outsiders over real sockets" },
  { path: "packages/cluster/test/ClusterSessions.test.ts", why: "the embedded cluster against the simulator over real sockets" },
  { path: "packages/cluster/test/shared/EventLogSql.test.ts", why: "the event log on PostgreSQL" },
  { path: "packages/cluster/test/shared/ClusterSessionsSql.test.ts", why: "a single runner on PostgreSQL against the simulator over real sockets" },
  { path: "packages/cluster/test/shared/failover.e2e.test.ts", why: "PostgreSQL, runners and a client as child processes" },
  { path: "packages/cluster/test/shared/freeze.e2e.test.ts", why: "PostgreSQL, runners and a client as child processes" },
  { path: "packages/cluster/test/shared/faults.e2e.test.ts", why: "PostgreSQL, runners and a client as child processes" },
  { path: "packages/cluster/test/pendingRequests.test.ts", why: "sessions against the simulator over real sockets" },
  { path: "packages/cluster/test/shared/rebalance.e2e.test.ts", why: "PostgreSQL, runners and a client as child processes" },
  { path: "packages/cluster/test/requestKey.test.ts", why: "sessions on PostgreSQL against the simulator over real sockets" },
  { path: "packages/cluster/test/shared/startup.test.ts", why: "runners started together on PostgreSQL" },
  { path: "test/consumer/", why: "packs the packages and installs them in a fresh application" },
  { path: "packages/effect3/test/e2e/", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/shared/hostile.test.ts", why: "hostile servers over real sockets" },
  { path: "packages/effect3/test/shared/e2e.dialects.test.ts", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/shared/e2e.events.test.ts", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/shared/e2e.http.test.ts", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/shared/e2e.sessions.test.ts", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/hostile/", why: "hostile servers over real sockets, the simulator as a child process" },
  { path: "packages/effect3/test/shared/paid/", why: "the SDK against the simulator over real sockets" },
  { path: "packages/effect3/test/recording/roundtrip.test.ts", why: "sessions recorded from the simulator and replayed over real sockets" },
  { path: "packages/effect3/test/reliability/", why: "faults, fuzzing, load and security over real sockets" },
  { path: "packages/effect3/test/runtimes/", why: "the SDK on Bun, Deno and Node 22 as child processes against the simulator over real sockets" },
  { path: "packages/simulator/test/Exposed.test.ts", why: "the simulator over real and raw sockets" },
  { path: "packages/simulator/test/Http.test.ts", why: "the simulator over real sockets" },
  { path: "packages/simulator/test/ObservedClient.test.ts", why: "the simulator over real sockets" },
  { path: "packages/simulator/test/Replay.test.ts", why: "the replay server over real sockets" },
  { path: "packages/simulator/test/Simulator.pinned.test.ts", why: "the simulator over real sockets" },
  { path: "packages/simulator/test/Sse.test.ts", why: "the simulator over real sockets" },
  { path: "packages/simulator/test/WebSocket.test.ts", why: "the simulator over real sockets" }
]

/** Whether an entry (a file, or a folder ending with `/`) covers a file path. */
export const covers = (entry: string, file: string): boolean =>
  entry.endsWith("/") ? file.startsWith(entry) : file === entry

/** The entry as a vitest `include` pattern. */
export const pattern = (entry: string): string => (entry.endsWith("/") ? `${entry}**/*.test.ts` : entry)
