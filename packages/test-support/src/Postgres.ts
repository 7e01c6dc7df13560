/**
 * A real PostgreSQL server for tests and benchmarks: `initdb` into a temporary directory, the
 * server started on a free loopback port, stopped and the directory removed when the scope
 * closes. The binaries are PostgreSQL's own (`PG_BIN`, else `pg_config --bindir`, else the
 * newest `/usr/lib/postgresql/<version>/bin`). PostgreSQL refuses to run as root: as root,
 * `initdb` and the server run as the `postgres` user (or `nobody`), spawned with that uid/gid
 * (so that signals reach the server itself).
 *
 * Written against Effect 3: the Effect 3 edition's and the command line's tests and benches use
 * it; the Effect 4 edition does not import it (its install holds Effect 4 only).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

export interface Postgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** Stops the server (fast shutdown: every connection is closed) and starts it again, same port and data. */
  readonly restart: Effect.Effect<void, Error>
}

/** Where the PostgreSQL binaries are, or a description of why none were found. */
export const binDir = (): string | undefined => {
  const fromEnv = process.env["PG_BIN"]
  if (fromEnv !== undefined && existsSync(join(fromEnv, "initdb"))) return fromEnv
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
    if (existsSync(join(dir, "initdb"))) return dir
  } catch {
    // not on the PATH
  }
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin")
}

/** The unprivileged user to run PostgreSQL as when this process is root. */
const serverUser = (): User | undefined => {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim())
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim())
      return { name, uid, gid }
    } catch {
      // no such user
    }
  }
  return undefined
}

export const freePort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

type User = { readonly name: string; readonly uid: number; readonly gid: number }

const run = (command: string, args: ReadonlyArray<string>, user?: User) =>
  Effect.async<string, Error>((resume) => {
    const ids = user === undefined ? {} : { uid: user.uid, gid: user.gid }
    const child = execFile(command, args, { timeout: 60_000, cwd: tmpdir(), ...ids }, (error, stdout, stderr) => {
      if (error === null) resume(Effect.succeed(stdout))
      else resume(Effect.fail(new Error(`${command} ${args.join(" ")}: ${error.message}\n${stderr}`)))
    })
    return Effect.sync(() => child.kill())
  })

/** Starts a PostgreSQL server in the scope. */
export const start: Effect.Effect<Postgres, Error, Scope.Scope> = Effect.gen(function*() {
  const bin = binDir()
  if (bin === undefined) {
    return yield* Effect.fail(
      new Error("PostgreSQL binaries not found (set PG_BIN, or install postgresql: .ci/run does it with apt-get)")
    )
  }
  const user = serverUser()

  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "eas-pg-"))
      if (user !== undefined) chownSync(dir, user.uid, user.gid)
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const data = join(dir, "data")
  yield* run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"], user)
  const port = yield* freePort
  const spawnServer = (): ChildProcess => {
      const args = [
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "max_connections=300"
      ]
      const ids = user === undefined ? {} : { uid: user.uid, gid: user.gid }
      return spawn(join(bin, "postgres"), args, { stdio: "ignore", cwd: dir, ...ids })
  }
  const stop = (child: ChildProcess) =>
    Effect.async<void>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
      // SIGINT: PostgreSQL's fast shutdown.
      child.kill("SIGINT")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      timer.unref()
    })
  let server = spawnServer()
  yield* Effect.addFinalizer(() => Effect.suspend(() => stop(server)))
  // Ready when it accepts a connection and answers.
  const ready = run(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-t", "1"]).pipe(
    Effect.filterOrFail(() => server.exitCode === null, () => new Error("postgres exited")),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(150))))
  )
  yield* ready
  const restart = Effect.suspend(() => stop(server)).pipe(
    Effect.zipRight(Effect.sync(() => {
      server = spawnServer()
    })),
    Effect.zipRight(ready)
  )
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, restart }
})

/** A server shared by the tests of a suite: {@link layer}. */
export class Server extends Context.Tag("test/Postgres/Server")<Server, Postgres>() {}

/** {@link start} as a layer. */
export const layer: Layer.Layer<Server, Error> = Layer.scoped(Server, start)
