#!/usr/bin/env node
// Bun and Deno for the Effect 4 edition's runtime tests (test/runtimes), without changing the
// machine: the pinned platform packages of `bun` and `deno` (`@oven/bun-<os>-<arch>`,
// `@deno/<os>-<arch>-glibc`, locked with their integrity in `runtimes/package-lock.json`) are
// installed into `runtimes/` on first use with `npm ci --ignore-scripts` (their binaries need no
// install script), and used from then on. A stamp (the hash of the manifest and the lock) skips
// the install when it is done already.
//
//   node scripts/runtimes.mjs --print <bun|deno>   prints the path of the binary (installing first)
//   node scripts/runtimes.mjs --install            installs both, unless they already are
//   node scripts/runtimes.mjs --version <bun|deno> prints the pinned version
//
// Exit code 3 (and a line on standard error) when no package is pinned for this platform: the
// runtime tests are skipped there, and say so.
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const here = Path.dirname(Url.fileURLToPath(import.meta.url))
const dir = Path.resolve(here, "..", "runtimes")

const fail = (message, code = 1) => {
  process.stderr.write(`runtimes: ${message}\n`)
  process.exit(code)
}

/** The package and the binary in it of each runtime, for this platform. */
const packages = {
  bun: { name: `@oven/bun-${process.platform}-${process.arch === "arm64" ? "aarch64" : process.arch}`, binary: ["bin", "bun"] },
  deno: { name: `@deno/${process.platform}-${process.arch}-glibc`, binary: ["deno"] }
}

const manifest = () => JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8"))

/** The pinned package of a runtime for this platform, or undefined. */
const pinned = (runtime) => {
  const spec = packages[runtime]
  if (spec === undefined) fail(`unknown runtime "${runtime}" (bun or deno)`)
  const version = manifest().dependencies?.[spec.name]
  return version === undefined ? undefined : { ...spec, version }
}

const stamp = () => {
  const hash = Crypto.createHash("sha256")
  for (const file of ["package.json", "package-lock.json"]) hash.update(Fs.readFileSync(Path.join(dir, file)))
  return hash.digest("hex")
}

/** `npm ci --ignore-scripts` in runtimes/, unless installed from this manifest and lock already. */
const install = () => {
  const stampFile = Path.join(dir, "node_modules", ".runtimes-install")
  const expected = stamp()
  if (Fs.existsSync(stampFile) && Fs.readFileSync(stampFile, "utf8") === expected) return
  process.stderr.write(`runtimes: installing Bun and Deno (npm ci in ${Path.relative(process.cwd(), dir) || "."})\n`)
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_config_")))
  const ran = ChildProcess.spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], {
    cwd: dir,
    stdio: ["ignore", 2, "inherit"],
    env
  })
  if (ran.status !== 0) fail(`npm ci in ${dir} failed (exit ${ran.status})`)
  Fs.writeFileSync(stampFile, expected)
}

const binaryOf = (pin) => Path.join(dir, "node_modules", ...pin.name.split("/"), ...pin.binary)

const [command, runtime] = process.argv.slice(2)
if (command === "--install") {
  install()
  process.exit(0)
}
if (command !== "--print" && command !== "--version") fail("usage: node scripts/runtimes.mjs --print <bun|deno> | --version <bun|deno> | --install")
const pin = pinned(runtime)
if (pin === undefined) fail(`no ${runtime} package is pinned for ${process.platform}-${process.arch} in runtimes/package.json`, 3)
if (command === "--version") {
  process.stdout.write(`${pin.version}\n`)
  process.exit(0)
}
install()
const binary = binaryOf(pin)
if (!Fs.existsSync(binary)) fail(`${binary} is missing after the install`)
process.stdout.write(`${binary}\n`)
