/**
 * `effect-agent-session onboard` as a child process against the simulator on port 0.
 */
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Simulator } from "../../src/simulator/index.js"
import { cleanEnv, run } from "./helpers.js"

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
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "eas-onboard-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
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
      const again = yield* run(["onboard", "--name", "scout", "--website", "https://example.com", "--domain", "sales"], env)
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
})
