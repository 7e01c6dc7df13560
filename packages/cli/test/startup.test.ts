/**
 * Issue 22, the command line's packaging: the cluster commands' packages are optional (the other
 * commands run without them; a cluster command says in one line what to install); a clone that
 * was not built says what to run instead of a stack trace; `--help` and `--version` are answered
 * without loading a command (no timing here: the repository's bench/startup.ts measures it, and
 * the root's test/bench.test.ts checks that it runs).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { clusterPackages } from "../src/Cli.js"
import { Simulator } from "effect-agent-session-simulator"
import { cleanEnv, envFor, execute, launcher, packageDir, runArgs, tempDir } from "./helpers.js"

const noCluster = Url.pathToFileURL(Path.join(packageDir, "test/fixtures/no-cluster.mjs")).href
/** The repository's documentation (docs/ at its root). */
const docs = Path.resolve(packageDir, "..", "..", "docs")

/** Runs node with `nodeArgs` to its end (pipes). */
const node = (nodeArgs: ReadonlyArray<string>, env: Record<string, string>, cwd = packageDir) =>
  execute(process.execPath, nodeArgs, env, cwd)

/** The launcher with the cluster's packages made unresolvable. */
const withoutCluster = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  node([...launcher.slice(0, 3), "--import", noCluster, ...launcher.slice(3), ...args], env)

describe("issue 22: the cluster's packages are optional peers of the command line", () => {
  it.live("without them: run completes, and a cluster command says in one line what to install", () =>
    Effect.scoped(Effect.gen(function*() {
      const sim = yield* Simulator.make({ scenario: { actions: 2, ask: "none", frameDelay: Duration.millis(1) } })
      const [ran, watch, runner] = yield* Effect.all([
        withoutCluster(runArgs(2), envFor(sim)),
        withoutCluster(["watch", "ses_1"], cleanEnv({ CLUSTER_DATABASE_URL: "postgres://127.0.0.1:1/x" })),
        withoutCluster(["runner"], cleanEnv())
      ], { concurrency: "unbounded" })
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout).toContain("Actions: 2/2")
      for (const result of [watch, runner]) {
        expect(result.code).toBe(2)
        expect(result.stderr).toBe(
          "error: the cluster commands need @effect/cluster, @effect/rpc, @effect/sql, @effect/sql-pg, @effect/workflow, @effect/experimental " +
            "(@effect/cluster is not installed): npm install @effect/cluster@^0.60.2 @effect/rpc@^0.76.2 @effect/sql@^0.52.1 " +
            "@effect/sql-pg@^0.53.0 @effect/workflow@^0.19.1 @effect/experimental@^0.61.1\n"
        )
      }
    })))

  it("the ranges the error names are the command line's optional peers", () => {
    const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8")) as {
      readonly peerDependencies: Record<string, string>
    }
    for (const [name, range] of Object.entries(clusterPackages)) expect(manifest.peerDependencies[name], name).toBe(range)
  })

  it("the error names the packages the docs install for the cluster", () => {
    const install = Fs.readFileSync(Path.join(docs, "scale-out.md"), "utf8").split("\n").find((line) =>
      /^npm install (effect-agent-session-cluster )?@effect\/cluster/.test(line)
    )
    const named = (install ?? "").split(/\s+/).slice(2).filter((spec) => spec.startsWith("@effect/")).map((spec) =>
      spec.replace(/^(@?[^@]+)@.*$/, "$1")
    ).sort()
    expect(Object.keys(clusterPackages).sort()).toEqual(named)
    expect(named).toHaveLength(6)
  })
})

describe("issue 22: a clone that was not built", () => {
  it.live("the bin says what to run, in one line, exit 2, no stack trace", () =>
    Effect.gen(function*() {
      // The bin as it sits in a clone before any build: no dist/ beside it.
      const dir = yield* tempDir("eas-clone-")
      Fs.mkdirSync(Path.join(dir, "bin"))
      Fs.writeFileSync(Path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
      Fs.copyFileSync(Path.join(packageDir, "bin/effect-agent-session.js"), Path.join(dir, "bin/effect-agent-session.js"))
      const result = yield* node([Path.join(dir, "bin/effect-agent-session.js"), "--version"], cleanEnv(), dir)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        "error: effect-agent-session is not built in this clone: run `npm run build -w effect-agent-session-cli` " +
          "(or run it from the sources: `npm run cli -- <command>`)\n"
      )
    }).pipe(Effect.scoped))
})
