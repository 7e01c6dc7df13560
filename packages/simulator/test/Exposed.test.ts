/**
 * Issue 20, items 9 and 10: the simulator is a server people expose. Listening beyond loopback it
 * does not accept the well-known account key (a random one unless one is given); and a method no
 * route serves, `TRACE`, `TRACK` and `CONNECT` included, is a status with a JSON body on every
 * contract route, never an empty 500 or a silent close (raw sockets: `fetch` refuses `TRACE`).
 */
import * as Net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Dialect from "effect-agent-session/Dialect"
import { Simulator } from "../src/index.js"
import { authHeader, field, http } from "./helpers.js"

const agentBody = { name: "exposed", website: "https://example.com", domain: "sales" }

describe("issue 20 item 9: listening beyond loopback", () => {
  it.scopedLive("0.0.0.0 without a key: a random account key; the well-known one is refused", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ host: "0.0.0.0" })
      assert.notStrictEqual(sim.accountKey, Simulator.defaultAccountKey)
      assert.match(sim.accountKey, /^sim_[A-Za-z0-9_-]{32}$/)
      const refused = yield* http(sim, "POST", "/agent/onboard", {
        body: agentBody,
        headers: authHeader(sim.dialect, Simulator.defaultAccountKey)
      })
      assert.strictEqual(refused.status, 401)
      const accepted = yield* http(sim, "POST", "/agent/onboard", { body: agentBody, headers: authHeader(sim.dialect, sim.accountKey) })
      assert.strictEqual(accepted.status, 200)
      // Another simulator, another key.
      const other = yield* Simulator.make({ host: "0.0.0.0" })
      assert.notStrictEqual(other.accountKey, sim.accountKey)
    }))

  it.scopedLive("a key given is kept beyond loopback; loopback keeps the well-known default", () =>
    Effect.gen(function*() {
      const given = yield* Simulator.make({ host: "0.0.0.0", accountKey: "chosen-key" })
      assert.strictEqual(given.accountKey, "chosen-key")
      const local = yield* Simulator.make({ host: "127.0.0.1" })
      assert.strictEqual(local.accountKey, Simulator.defaultAccountKey)
    }))

  it("isLoopback: localhost, 127/8 and ::1 only", () => {
    for (const host of ["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "LOCALHOST"]) {
      assert.isTrue(Simulator.isLoopback(host), host)
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.com", "127.0.0.1.example.com", ""]) {
      assert.isFalse(Simulator.isLoopback(host), host)
    }
  })
})

/** Sends raw bytes and reads until the server closes (or 5 s): the status line and the body. */
const raw = (port: number, request: string) =>
  Effect.async<{ readonly status: number; readonly body: string; readonly text: string }>((resume) => {
    const socket = Net.connect(port, "127.0.0.1", () => socket.write(request))
    let text = ""
    socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
    const done = () => {
      clearTimeout(timer)
      const status = Number(text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0)
      const head = text.slice(0, text.indexOf("\r\n\r\n"))
      let body = text.slice(head.length + 4)
      if (/^transfer-encoding: *chunked/im.test(head)) {
        let decoded = ""
        for (let rest = body; rest.length > 0;) {
          const size = parseInt(rest, 16)
          if (!(size > 0)) break
          const start = rest.indexOf("\r\n") + 2
          decoded += rest.slice(start, start + size)
          rest = rest.slice(start + size + 2)
        }
        body = decoded
      }
      resume(Effect.succeed({ status, body, text }))
    }
    const timer = setTimeout(() => socket.destroy(), 5_000)
    socket.on("close", done)
    socket.on("error", () => socket.destroy())
    return Effect.sync(() => socket.destroy())
  })

describe("issue 20 item 10: methods no route serves", () => {
  for (const dialect of [Dialect.documented, Dialect.observed]) {
    it.scopedLive(`${dialect.name}: TRACE, TRACK, CONNECT and others on every route: a status with a { _tag, error } body`, () =>
      Effect.gen(function*() {
        const sim = yield* Simulator.make({ dialect })
        const routes = ["/agent/onboard", dialect.sessionsPath, `${dialect.sessionsPath}/ses_x`, "/v1/connect", "/nope"]
        for (const method of ["TRACE", "TRACK", "CONNECT", "PUT", "DELETE", "PROPFIND", "QUERY"]) {
          for (const route of routes) {
            const target = method === "CONNECT" ? `127.0.0.1:${sim.port}` : route
            const answer = yield* raw(
              sim.port,
              `${method} ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sim.accountKey}\r\n` +
                `Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`
            )
            const label = `${method} ${target}: ${JSON.stringify(answer.text.slice(0, 200))}`
            assert.isAtLeast(answer.status, 400, label)
            assert.isBelow(answer.status, 500, label)
            const body: unknown = JSON.parse(answer.body)
            assert.isString(field(body, "_tag"), label)
            assert.isAbove(String(field(body, "error")).length, 0, label)
          }
        }
        // And the simulator still serves.
        const after = yield* http(sim, "POST", "/agent/onboard", { body: agentBody, headers: authHeader(sim.dialect, sim.accountKey) })
        assert.strictEqual(after.status, 200)
      }))
  }
})
