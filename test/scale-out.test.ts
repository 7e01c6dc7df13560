/**
 * The scale-out walk-through (`docs/scale-out.md`, "Try it") on Effect 3, run as the page shows
 * it (test-support's `walkThrough.ts`: how each command runs, what must hold): PostgreSQL by the
 * page's `initdb` and `postgres`, its secret, the service by its `simulate`, three runners by its
 * `runner` commands, a session by its `submit` (its transcript checked), the runner that holds it
 * killed by its `kill -9` while the session waits for its approval, the approval by its `answer`;
 * the session must go on from the next event, each sequence number once, to `run: complete`.
 * The Effect 4 part of the walk-through is run by the Effect 4 edition's suite
 * (`packages/effect4/test/cluster/scaleOut.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { commandsOf } from "effect-agent-session-test-support/DocBlocks"
import { cleanEnv } from "effect-agent-session-test-support/launch"
import { runWalkThrough } from "effect-agent-session-test-support/walkThrough"

const root = Path.join(import.meta.dirname, "..")
const page = Fs.readFileSync(Path.join(root, "docs", "scale-out.md"), "utf8")
const tryIt = page.indexOf("\n## Try it")
/** The walk-through's Effect 3 part: the page's "Try it" section up to its Effect 4 part. */
const walkThrough = page.slice(tryIt, page.indexOf("\n### The same on Effect 4", tryIt))
const cli = Path.join(Path.dirname(createRequire(import.meta.url).resolve("effect-agent-session-cli/package.json")), "src/main.ts")

describe("docs/scale-out.md's walk-through, on Effect 3", () => {
  const commands = commandsOf("docs/scale-out.md", walkThrough)
  const transcript = [...walkThrough.matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)]
    .filter((match) => (match[1] ?? "").trim() === "")
    .map((match) => match[2] ?? "")
    .find((text) => text.startsWith("$ npx effect-agent-session submit"))

  it("shows PostgreSQL, a secret, the service, three runners, a session, a kill and an answer", () => {
    const lines = commands.map(({ line }) => line)
    for (const pattern of [/^initdb /, /^postgres -D /, /openssl rand/, / simulate /, / submit /, /^kill -9 /, / answer ses_/]) {
      assert.isTrue(lines.some((line) => pattern.test(line)), String(pattern))
    }
    assert.strictEqual(lines.filter((line) => / runner --port \d+$/.test(line)).length, 3)
    assert.isDefined(transcript)
  })

  it.live("runs: a runner killed while the session waits, the session answered, every event once", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "scale-out-"))),
      (dir) =>
        Effect.promise(() =>
          runWalkThrough({ commands, transcript, dir, project: (name) => Path.join(dir, name), cli, env: cleanEnv() }).then(
            () => undefined,
            (error: unknown) => String(error instanceof Error ? error.message : error)
          )
        ).pipe(Effect.map((problem) => assert.strictEqual(problem, undefined))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    ), 400_000)
})
