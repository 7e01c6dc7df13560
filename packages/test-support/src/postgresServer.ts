/**
 * A real PostgreSQL server for tests and benchmarks, without Effect (so that both editions' tests
 * use it: `Postgres.ts` wraps it in Effect 3, the Effect 4 cluster's test helpers in Effect 4):
 * `initdb` into a temporary directory, the server started on a free loopback port, stopped and the
 * directory removed by `stop`. The binaries are PostgreSQL's own (`PG_BIN`, else
 * `pg_config --bindir`, else the newest `/usr/lib/postgresql/<version>/bin`). PostgreSQL refuses to
 * run as root: as root, `initdb` and the server run as the `postgres` user (or `nobody`), spawned
 * with that uid/gid (so that signals reach the server itself).
 *
 * Every wait is bounded: `initdb` and `pg_isready` by their time-outs, readiness by 150 tries
 * 100 ms apart, a stop by a `SIGKILL` after 10 seconds.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A running server. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** Stops the server (fast shutdown: every connection is closed) and starts it again, same port and data. */
  readonly restart: () => Promise<void>
  /** Stops the server and removes its directory. */
  readonly stop: () => Promise<void>
}

/** Where the PostgreSQL binaries are, if anywhere. */
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

/** A user of this machine, by name and ids. */
export type User = { readonly name: string; readonly uid: number; readonly gid: number }

/** The unprivileged user to run PostgreSQL as when this process is root. */
export const serverUser = (): User | undefined => {
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

/** A free loopback port (the operating system's choice). */
export const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const run = (command: string, args: ReadonlyArray<string>, user?: User): Promise<string> =>
  new Promise((resolve, reject) => {
    const ids = user === undefined ? {} : { uid: user.uid, gid: user.gid }
    execFile(command, args, { timeout: 60_000, cwd: tmpdir(), ...ids }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout)
      else reject(new Error(`${command} ${args.join(" ")}: ${error.message}\n${stderr}`))
    })
  })

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    timer.unref()
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    // SIGINT: PostgreSQL's fast shutdown.
    child.kill("SIGINT")
  })

/** Starts a PostgreSQL server; `stop` it when done (it fails with an `Error` saying why it could not start). */
export const startServer = async (): Promise<PostgresServer> => {
  const bin = binDir()
  if (bin === undefined) {
    return Promise.reject(
      new Error("PostgreSQL binaries not found (set PG_BIN, or install postgresql: .ci/run does it with apt-get)")
    )
  }
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), "eas-pg-"))
  const removeDir = () => rmSync(dir, { recursive: true, force: true })
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  const data = join(dir, "data")
  try {
    await run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"], user)
  } catch (error) {
    removeDir()
    return Promise.reject(error)
  }
  const port = await freePort()
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
  let server = spawnServer()
  const stop = async () => {
    await stopChild(server)
    removeDir()
  }
  // Ready when it accepts a connection and answers.
  const ready = async () => {
    for (let attempt = 0;; attempt++) {
      if (server.exitCode !== null) return Promise.reject(new Error("postgres exited"))
      try {
        await run(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-t", "1"])
        return
      } catch (error) {
        if (attempt >= 150) return Promise.reject(error)
      }
      await sleep(100)
    }
  }
  try {
    await ready()
  } catch (error) {
    await stop()
    return Promise.reject(error)
  }
  const restart = async () => {
    await stopChild(server)
    server = spawnServer()
    await ready()
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, restart, stop }
}
