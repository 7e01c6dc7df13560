/**
 * The scale-out walk-through (`docs/scale-out.md`, "Try it") on Effect 4, run as the page shows it
 * (test-support's `walkThrough.ts`: how each command runs, what must hold): its shared steps
 * (PostgreSQL by the page's `initdb` and `postgres`, its secret, the service by its `simulate`),
 * then its Effect 4 part: the project (its packages: this edition, linked), the cluster's own
 * database by the page's `psql`, the page's three programs (`runner.ts`, `submit.ts`, `answer.ts`,
 * its ```ts effect4 blocks) run by its `npx tsx` commands: three runners, a session that waits for
 * its approval, the runner holding it killed by the page's `kill -9`, the approval; the session
 * must go on from the next event, each sequence number once, to `run: complete`. The Effect 3
 * part is run by the root's suite (`test/scale-out.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { commandsOf, docBlocks } from "effect-agent-session-test-support/DocBlocks"
import { cleanEnv } from "effect-agent-session-test-support/launch"
import { runWalkThrough } from "effect-agent-session-test-support/walkThrough"
import { repositoryRoot } from "../helpers/simulator.js"

const packageDir = Path.join(import.meta.dirname, "..", "..")
const page = Fs.readFileSync(Path.join(repositoryRoot, "docs", "scale-out.md"), "utf8")
const tryIt = page.indexOf("\n## Try it")
const effect4 = page.indexOf("\n### The same on Effect 4", tryIt)
/** The steps both lines share (PostgreSQL, the secret, the service), then the Effect 4 part. */
const walkThrough = page.slice(tryIt, page.indexOf("\n**3. ", tryIt)) + page.slice(effect4, page.indexOf("\n## ", effect4 + 1))
const programs = docBlocks("docs/scale-out.md").filter((block) => block.kind === "effect4")
const cli = Path.join(repositoryRoot, "packages", "cli", "src", "main.ts")

describe("docs/scale-out.md's walk-through, on Effect 4", () => {
  const commands = commandsOf("docs/scale-out.md", walkThrough)

  it("shows the shared steps, the cluster's database, three runners, a session, a kill and an answer, and its programs", () => {
    const lines = commands.map(({ line }) => line)
    for (const pattern of [/^initdb /, /^postgres -D /, / simulate /, /^psql .*CREATE DATABASE/, / submit\.ts$/, /^kill -9 /, / answer\.ts ses_/]) {
      assert.isTrue(lines.some((line) => pattern.test(line)), String(pattern))
    }
    assert.strictEqual(lines.filter((line) => / runner\.ts \d+$/.test(line)).length, 3)
    assert.deepStrictEqual(programs.map((block) => block.name), ["runner.ts", "submit.ts", "answer.ts"])
  })

  it.live("runs: a runner killed while the session waits, the session answered, every event once", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => ({
        dir: Fs.mkdtempSync(Path.join(Os.tmpdir(), "scale-out-4-")),
        // The project lies in this package, so that its programs find this edition's dependencies.
        project: Path.join(packageDir, ".tmp", `scale-out-${process.pid}`)
      })),
      ({ dir, project }) =>
        Effect.promise(() =>
          runWalkThrough({
            commands,
            dir,
            project: (name) => name === "try-cluster-4" ? project : Path.join(dir, name),
            onProject: (name, at) => {
              if (name !== "try-cluster-4") return
              // What the page installs: this edition (its dependencies are this package's).
              Fs.mkdirSync(Path.join(at, "node_modules"), { recursive: true })
              Fs.symlinkSync(packageDir, Path.join(at, "node_modules", "effect-agent-session-effect4"))
              for (const block of programs) Fs.writeFileSync(Path.join(at, block.name!), block.code)
            },
            cli,
            env: cleanEnv()
          }).then(() => undefined, (error: unknown) => String(error instanceof Error ? error.message : error))
        ).pipe(Effect.map((problem) => assert.strictEqual(problem, undefined))),
      ({ dir, project }) =>
        Effect.sync(() => {
          Fs.rmSync(dir, { recursive: true, force: true })
          Fs.rmSync(project, { recursive: true, force: true })
        })
    ), 400_000)
})
