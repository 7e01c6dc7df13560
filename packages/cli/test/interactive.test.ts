/**
 * The interactive path in a real terminal: tmux when installed, else a pseudo-terminal from
 * `script` (util-linux). The launcher runs as a child process against the simulator on port 0.
 */
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, openTerminal, stripAnsi } from "./helpers.js"

layer(Simulator.layer({ scenario: { actions: 4, ask: "input", frameDelay: Duration.millis(20) } }), {
  excludeTestServices: true
})("effect-agent-session run in a terminal", (it) => {
  it.scoped("the prompt appears, the typed answer reaches the simulator, the bar reaches 4/4", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const terminal = yield* openTerminal(
        ["run", "--goal", "Find the pricing page", "--start-url", "https://example.com", "--max-actions", "4"],
        cleanEnv({
          AGENT_SESSION_BASE_URL: sim.baseUrl,
          AGENT_SESSION_WS_URL: sim.wsUrl,
          AGENT_SESSION_API_KEY: sim.accountKey
        })
      )
      // The agent asks for its `email` field: a text prompt.
      const asked = yield* terminal.waitFor(/email \(empty to deny\)/)
      expect(asked).toContain("the agent asks (request_user_input [field email]")
      // While the prompt is up, the live bar is cleared; it shows the actions so far.
      yield* terminal.type("me@example.com")
      yield* terminal.enter
      const code = yield* terminal.exitCode()
      const screen = stripAnsi(yield* terminal.screen)
      expect(code).toBe(0)
      expect(screen).toMatch(/\] 4\/4 actions/)
      expect(screen).toContain(`granted with input "me@example.com"`)
      expect(screen).toContain("Total cost: ")
      const sessionId = screen.match(/session (ses_\S+)/)?.[1] ?? ""
      const answers = yield* sim.answers(sessionId)
      expect(answers.map((a) => [a.resource_type, a.granted, a.input])).toEqual([
        ["request_user_input", true, "me@example.com"]
      ])
    }))
})

layer(Simulator.layer({ scenario: { actions: 3, ask: "permission", frameDelay: Duration.millis(20) } }), {
  excludeTestServices: true
})("effect-agent-session run in a terminal, permission", (it) => {
  it.scoped("a yes/no prompt for a permission request; answering no denies it", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const terminal = yield* openTerminal(
        ["run", "--goal", "Publish the post", "--start-url", "https://example.com", "--max-actions", "3"],
        cleanEnv({
          AGENT_SESSION_BASE_URL: sim.baseUrl,
          AGENT_SESSION_WS_URL: sim.wsUrl,
          AGENT_SESSION_API_KEY: sim.accountKey
        })
      )
      yield* terminal.waitFor(/Allow this request\?/)
      // The yes/no prompt takes one key.
      yield* terminal.type("n")
      const code = yield* terminal.exitCode()
      const screen = stripAnsi(yield* terminal.screen)
      expect(code).toBe(0)
      expect(screen).toMatch(/\] 3\/3 actions/)
      expect(screen).toContain("admin_permission_request: denied")
      const sessionId = screen.match(/session (ses_\S+)/)?.[1] ?? ""
      const answers = yield* sim.answers(sessionId)
      expect(answers.map((a) => [a.resource_type, a.granted])).toEqual([["admin_permission_request", false]])
    }))
})
