/**
 * `effect-agent-session onboard` as a child process against the simulator on port 0.
 */
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, execute, launcher, run, tempDir } from "./helpers.js"

/** The launcher under `ulimit -f 0`: it may open files, but a write of one byte to one fails (EFBIG). */
const runWithoutDiskSpace = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  execute("sh", ["-c", `ulimit -f 0; exec "$0" "$@"`, process.execPath, ...launcher, ...args], env)

/** The simulator, and an environment with its URL and account key (no WebSocket URL: onboard needs none). */
const withAccountKey = Effect.map(Simulator.Simulator, (sim) => ({
  sim,
  env: cleanEnv({ AGENT_SESSION_BASE_URL: sim.baseUrl, AGENT_SESSION_API_KEY: sim.accountKey })
}))

layer(Simulator.layer({ scenario: { actions: 2, ask: "none", frameDelay: Duration.millis(1) } }), {
  excludeTestServices: true
})("effect-agent-session onboard", (it) => {
  it.effect("prints the agent without its key, writes the key only where asked (0600), and run uses it with --agent-key", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const env = cleanEnv({
        AGENT_SESSION_BASE_URL: sim.baseUrl,
        AGENT_SESSION_WS_URL: sim.wsUrl,
        AGENT_SESSION_API_KEY: sim.accountKey
      })
      const dir = yield* tempDir("eas-onboard-")
      const keyFile = Path.join(dir, "agent.key")

      const onboarded = yield* run(
        ["onboard", "--name", "scout", "--website", "https://example.com", "--domain", "research", "--save-key", keyFile],
        env
      )
      expect(onboarded.stderr).toBe("")
      expect(onboarded.code).toBe(0)
      expect(onboarded.stdout).toMatch(/id: +\S+/)
      expect(onboarded.stdout).toContain("domain:  research")
      expect(onboarded.stdout).toContain(`written to ${keyFile} (mode 0600)`)
      expect(onboarded.stdout).toContain("AGENT_SESSION_AGENT_KEY")
      const key = Fs.readFileSync(keyFile, "utf8").trim()
      expect(key.length).toBeGreaterThan(0)
      expect(Fs.statSync(keyFile).mode & 0o777).toBe(0o600)
      // The key is never printed unless asked with --show-key.
      expect(onboarded.stdout).not.toContain(key)

      // A second agent with the same name is a conflict: a service error, exit 8, one line.
      const again = yield* run(
        ["onboard", "--name", "scout", "--website", "https://example.com", "--domain", "sales", "--show-key"],
        env
      )
      expect(again.code).toBe(8)
      expect(again.stderr.trimEnd().split("\n")).toHaveLength(1)
      expect(again.stderr).toMatch(/^error: Conflict: /)

      // The agent's key runs a session on its own (no account key).
      const withAgent = { ...env }
      delete withAgent["AGENT_SESSION_API_KEY"]
      const ran = yield* run(
        ["run", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "2", "--agent-key", key],
        withAgent
      )
      expect(ran.code).toBe(0)
      expect(ran.stdout).toContain("Actions: 2/2")
    }).pipe(Effect.scoped))

  it.effect("issue 20 item 8: without --save-key or --show-key it refuses (exit 2, naming both), nothing sent", () =>
    Effect.gen(function*() {
      const { env, sim } = yield* withAccountKey
      const before = yield* sim.httpRequests
      const result = yield* run(["onboard", "--name", "keyless", "--website", "https://example.com", "--domain", "sales"], env)
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/^error: onboard needs --save-key <file> or --show-key/)
      expect(yield* sim.httpRequests).toBe(before)
    }))

  it.effect("issue 20 item 8: a --save-key file that cannot be created stops it before the agent exists", () =>
    Effect.gen(function*() {
      const { env, sim } = yield* withAccountKey
      const dir = yield* tempDir("eas-onboard-")
      const existing = Path.join(dir, "taken.key")
      Fs.writeFileSync(existing, "keep me\n")
      const onboard = (...more: Array<string>) =>
        run(["onboard", "--name", "careful", "--website", "https://example.com", "--domain", "research", ...more], env)
      const before = yield* sim.httpRequests
      const missingDir = yield* onboard("--save-key", Path.join(dir, "no-such-dir", "agent.key"))
      expect(missingDir.code).toBe(2)
      expect(missingDir.stderr).toMatch(/^error: --save-key: cannot create .*agent\.key: no such directory/)
      const exists = yield* onboard("--save-key", existing)
      expect(exists.code).toBe(2)
      expect(exists.stderr).toContain("it exists (--save-key never overwrites a file)")
      expect(Fs.readFileSync(existing, "utf8")).toBe("keep me\n")
      expect(yield* sim.httpRequests).toBe(before)
      // The name is still free: nothing was registered.
      const ok = yield* onboard("--save-key", Path.join(dir, "agent.key"))
      expect(ok.code, ok.stderr).toBe(0)
    }).pipe(Effect.scoped))

  it.effect("issue 20 item 8: a key whose file cannot be written is printed, with the agent's id; exit 9", () =>
    Effect.gen(function*() {
      const { env, sim } = yield* withAccountKey
      const dir = yield* tempDir("eas-onboard-")
      const keyFile = Path.join(dir, "agent.key")
      const result = yield* runWithoutDiskSpace(
        ["onboard", "--name", "diskfull", "--website", "https://example.com", "--domain", "sales", "--save-key", keyFile],
        env
      )
      expect(result.code, result.stderr).toBe(9)
      expect(result.stdout).toMatch(/id: +\S+/)
      const key = result.stdout.match(/key: +(\S+)/)?.[1] ?? ""
      expect(result.stdout).toContain(`The key could not be written to ${keyFile}`)
      expect(result.stderr).toMatch(/^error: the agent was onboarded but its key could not be written/)
      expect(Fs.existsSync(keyFile)).toBe(false)
      // The printed key is the agent's: it runs a session on its own.
      const withAgent: Record<string, string> = { ...env, AGENT_SESSION_WS_URL: sim.wsUrl }
      delete withAgent["AGENT_SESSION_API_KEY"]
      const ran = yield* run(["run", "--goal", "g", "--start-url", "https://example.com", "--max-actions", "2", "--agent-key", key], withAgent)
      expect(ran.code, ran.stderr).toBe(0)
    }).pipe(Effect.scoped))
})
