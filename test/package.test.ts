/**
 * The published packages of the workspace say the same things: the library's run-time dependencies are
 * what it imports (the protocol core, the editions' shared glue and `ws`; Effect as peers), the core
 * has none, the shared glue the core only, the command line's are its own, and the versions and ranges agree. Each package's tarball (as `npm pack`
 * lists it) carries its README, LICENSE and CHANGELOG.md, and every relative link of the Markdown
 * it ships leads to a file of the same tarball. The packed result is exercised by
 * test/consumer/consumer.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import * as Effect from "effect/Effect"
import { version as cliVersion } from "effect-agent-session-cli/version"

interface Manifest {
  readonly name: string
  readonly version: string
  readonly bin?: Record<string, string>
  readonly files?: ReadonlyArray<string>
  readonly scripts?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly devDependencies?: Record<string, string>
  readonly workspaces?: ReadonlyArray<string>
  readonly private?: boolean
  readonly exports?: unknown
}

const root = join(import.meta.dirname, "..")
const manifest = (path: string): Manifest => JSON.parse(readFileSync(join(root, path), "utf8")) as Manifest
/** The repository's root: a private workspace of the packages, with the tools and tests they share. */
const workspace = manifest("package.json")
const library = manifest("packages/effect3/package.json")
const cli = manifest("packages/cli/package.json")
const core = manifest("packages/core/package.json")
const shell = manifest("packages/shell/package.json")
const simulator = manifest("packages/simulator/package.json")
const cluster = manifest("packages/cluster/package.json")
const conformance = manifest("packages/conformance/package.json")
const testSupport = manifest("packages/test-support/package.json")
/**
 * The packages published from this repository besides the library: the workspace's (a private one,
 * the conformance suite, never is) and the Effect 4 edition, a package of its own beside the
 * workspace (see its own manifest test).
 */
const separate = ["packages/effect4"]
const published = [...(workspace.workspaces ?? []), ...separate].filter((dir) => manifest(`${dir}/package.json`).private !== true)
/** The cluster edition's own packages: optional peers (see its manifest test). */
const clusterPeers = ["@effect/cluster", "@effect/rpc", "@effect/sql", "@effect/sql-pg"]
const requiredPeers = Object.fromEntries(
  Object.entries(library.peerDependencies ?? {}).filter(([name]) => library.peerDependenciesMeta?.[name]?.optional !== true)
)

describe("package manifests", () => {
  it("the library depends at run time on the core, the shared glue and ws only, Effect as peers; no bin, built by prepack", () => {
    assert.strictEqual(library.name, "effect-agent-session")
    assert.deepStrictEqual(Object.keys(library.dependencies ?? {}), ["effect-agent-session-core", "effect-agent-session-shell", "ws"])
    assert.strictEqual(library.dependencies?.["effect-agent-session-core"], `^${core.version}`)
    assert.strictEqual(library.dependencies?.["effect-agent-session-shell"], `^${shell.version}`)
    assert.deepStrictEqual(Object.keys(requiredPeers).sort(), [
      "@effect/platform",
      "@effect/platform-node",
      "effect"
    ])
    // The cluster's packages are the cluster edition's peers, not the library's.
    assert.deepStrictEqual(Object.keys(library.peerDependencies ?? {}).sort(), Object.keys(requiredPeers).sort())
    assert.notProperty(library.exports as Record<string, unknown>, "./cluster")
    assert.isUndefined(library.bin)
    assert.include(library.files ?? [], "dist")
    assert.match(library.scripts?.["prepack"] ?? "", /build/)
    // The protocol core, the editions' shared glue, the simulator, the command line, and the
    // Effect 4 edition (README.md, "Effect 3 or Effect 4"): packages of their own; the conformance
    // suite both editions run, and what the tests and benches of every package share (private,
    // never packed).
    // The repository's root is a private workspace: the Effect 3 edition is one of its packages.
    assert.strictEqual(workspace.private, true)
    assert.deepStrictEqual(workspace.workspaces, [
      "packages/core",
      "packages/shell",
      "packages/effect3",
      "packages/simulator",
      "packages/cluster",
      "packages/cli",
      "packages/conformance",
      "packages/test-support"
    ])
    for (const name of ["tsx", "@effect/cli", "@effect/printer", "@effect/printer-ansi"]) {
      assert.notProperty(library.dependencies ?? {}, name)
    }
  })

  it("the command line is its own package: bin effect-agent-session running dist, the library as a dependency", () => {
    assert.strictEqual(cli.name, "effect-agent-session-cli")
    assert.deepStrictEqual(cli.bin, { "effect-agent-session": "bin/effect-agent-session.js" })
    assert.match(readFileSync(join(root, "packages/cli/bin/effect-agent-session.js"), "utf8"), /import\("\.\.\/dist\/main\.js"\)/)
    assert.deepStrictEqual(cli.files, ["bin", "dist", "LICENSE", "CHANGELOG.md"])
    assert.match(cli.scripts?.["prepack"] ?? "", /build/)
    assert.strictEqual(cli.dependencies?.["effect-agent-session"], `^${library.version}`)
    assert.property(cli.dependencies ?? {}, "@effect/cli")
    // The command line's cluster commands (runner, watch, answer) load the cluster's packages only
    // when one of them runs: optional peers, as for the cluster edition it depends on.
    // Two more: peers of @effect/cluster and @effect/sql that npm does not install by itself, named
    // so that the command's "need ... packages" line names the six the docs install.
    const cliClusterPeers = { "@effect/workflow": "^0.19.1", "@effect/experimental": "^0.61.1" }
    assert.deepStrictEqual(cli.peerDependencies, {
      ...requiredPeers,
      ...Object.fromEntries(clusterPeers.map((name) => [name, cluster.peerDependencies?.[name]])),
      ...cliClusterPeers
    })
    for (const name of [...clusterPeers, ...Object.keys(cliClusterPeers)]) {
      assert.notProperty(cli.dependencies ?? {}, name)
      assert.strictEqual(cli.peerDependenciesMeta?.[name]?.optional, true, name)
    }
    assert.strictEqual(cliVersion, cli.version)
    // What the root's tests import of it: its sources behind the condition, else its build.
    for (const [entry, target] of Object.entries((cli.exports ?? {}) as Record<string, unknown>)) {
      if (entry === "./package.json") continue
      const module = entry.slice(2)
      assert.deepStrictEqual(target, { "effect-agent-session-source": `./src/${module}.ts`, default: `./dist/${module}.js` }, entry)
    }
  })

  it("the core is its own package: no dependency at all, compiled by prepack, its sources behind a condition", () => {
    assert.strictEqual(core.name, "effect-agent-session-core")
    assert.isUndefined(core.dependencies)
    assert.isUndefined(core.peerDependencies)
    assert.isUndefined(core.bin)
    assert.deepStrictEqual(core.files, ["dist", "src", "LICENSE", "CHANGELOG.md"])
    assert.match(core.scripts?.["prepack"] ?? "", /build/)
    // The library's build compiles the core first: its declarations are what the library's import.
    assert.match(workspace.scripts?.["build"] ?? "", /^npm run build -w packages\/core && /)
  })

  it("the shared glue is its own package: the core its one dependency, compiled by prepack, its sources behind a condition, one entry point", () => {
    assert.strictEqual(shell.name, "effect-agent-session-shell")
    assert.strictEqual(shell.version, core.version)
    assert.deepStrictEqual(shell.dependencies, { "effect-agent-session-core": `^${core.version}` })
    assert.isUndefined(shell.peerDependencies)
    assert.isUndefined(shell.bin)
    assert.deepStrictEqual(shell.files, ["dist", "src", "LICENSE", "CHANGELOG.md"])
    assert.match(shell.scripts?.["prepack"] ?? "", /build/)
    assert.deepStrictEqual(shell.exports, {
      ".": { "effect-agent-session-source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./package.json": "./package.json"
    })
    // The core has one entry point now: the protocol.
    assert.deepStrictEqual(Object.keys(core.exports as Record<string, unknown>), [".", "./package.json"])
    // Built after the core (its declarations are what the shell imports), before the library.
    assert.match(workspace.scripts?.["build"] ?? "", /^npm run build -w packages\/core && npm run build -w packages\/shell && npm run build -w packages\/effect3 && /)
  })

  it("the simulator is its own package: the library, the core and the shell its dependencies, Effect 3 as peers, built after the library", () => {
    assert.strictEqual(simulator.name, "effect-agent-session-simulator")
    assert.strictEqual(simulator.version, library.version)
    assert.deepStrictEqual(simulator.dependencies, {
      "effect-agent-session": `^${library.version}`,
      "effect-agent-session-core": `^${core.version}`,
      "effect-agent-session-shell": `^${shell.version}`,
      ws: library.dependencies?.["ws"] ?? "(the library has no ws)"
    })
    assert.deepStrictEqual(simulator.peerDependencies, requiredPeers)
    assert.isUndefined(simulator.bin)
    assert.deepStrictEqual(simulator.files, ["dist", "src", "LICENSE", "CHANGELOG.md"])
    assert.match(simulator.scripts?.["prepack"] ?? "", /build/)
    // The library no longer ships it; the command line depends on it.
    assert.notProperty(library.exports as Record<string, unknown>, "./simulator")
    assert.strictEqual(cli.dependencies?.["effect-agent-session-simulator"], `^${simulator.version}`)
    // Built after the library (its declarations are what the simulator imports).
    assert.match(workspace.scripts?.["build"] ?? "", / && npm run build -w packages\/effect3 && npm run build -w packages\/simulator && /)
  })

  it("the cluster edition is its own package: the library, the core and the shell its dependencies, the cluster's packages optional peers, built after the library", () => {
    assert.strictEqual(cluster.name, "effect-agent-session-cluster")
    assert.strictEqual(cluster.version, library.version)
    assert.deepStrictEqual(cluster.dependencies, {
      "effect-agent-session": `^${library.version}`,
      "effect-agent-session-core": `^${core.version}`,
      "effect-agent-session-shell": `^${shell.version}`
    })
    // Optional, so that the command line, which depends on it, runs its other commands without them.
    assert.deepStrictEqual(Object.keys(cluster.peerDependencies ?? {}).sort(), [...Object.keys(requiredPeers), ...clusterPeers].sort())
    for (const name of Object.keys(requiredPeers)) assert.strictEqual(cluster.peerDependencies?.[name], requiredPeers[name], name)
    for (const name of clusterPeers) {
      assert.strictEqual(cluster.peerDependenciesMeta?.[name]?.optional, true, name)
      assert.strictEqual(workspace.devDependencies?.[name], cluster.peerDependencies?.[name], `${name}: dev and peer ranges agree`)
    }
    assert.isUndefined(cluster.bin)
    assert.deepStrictEqual(cluster.files, ["dist", "src", "binding", "LICENSE", "CHANGELOG.md"])
    assert.match(cluster.scripts?.["prepack"] ?? "", /build/)
    assert.strictEqual(cli.dependencies?.["effect-agent-session-cluster"], `^${cluster.version}`)
    assert.match(workspace.scripts?.["build"] ?? "", / && npm run build -w packages\/cluster$/)
  })

  it("the conformance suite is a private package of sources: no build, one dependency (ws, for its hostile server), its index, its recordings and its fake WebSocket as its exports", () => {
    assert.strictEqual(conformance.name, "effect-agent-session-conformance")
    assert.isTrue(conformance.private)
    assert.deepStrictEqual(Object.keys(conformance.dependencies ?? {}), ["ws"])
    assert.isUndefined(conformance.scripts)
    assert.deepStrictEqual(conformance.exports, {
      ".": "./src/index.ts",
      "./recordings": "./src/recordings.ts",
      "./fakeWebSocket": "./src/fakeWebSocket.ts",
      "./package.json": "./package.json"
    })
    assert.deepStrictEqual(published, ["packages/core", "packages/shell", "packages/effect3", "packages/simulator", "packages/cluster", "packages/cli", "packages/effect4"])
  })

  it("the test support is a private package of sources: no build, no dependency (the Effect 4 edition links it, and takes nothing of Effect 3 with it)", () => {
    assert.strictEqual(testSupport.name, "effect-agent-session-test-support")
    assert.isTrue(testSupport.private)
    assert.isUndefined(testSupport.dependencies)
    assert.isUndefined(testSupport.peerDependencies)
    assert.isUndefined(testSupport.scripts)
    assert.deepStrictEqual(testSupport.exports, { "./*": "./src/*.ts", "./package.json": "./package.json" })
  })

  it("the peer ranges are the Effect 3 line the README's install commands name", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const peers = library.peerDependencies ?? {}
    // effect ^3.22.4 is installed by `effect@^3.22`; both exclude Effect 4.
    for (const [name, range] of Object.entries(peers)) {
      const minor = range.replace(/^\^/, "").split(".").slice(0, 2).join(".")
      assert.include(readme, `${name}@^${minor}`, name)
      assert.strictEqual(workspace.devDependencies?.[name], range, `${name}: dev and peer ranges agree`)
    }
    assert.match(peers["effect"] ?? "", /^\^3\./)
  })
})

/** A package as `npm pack --dry-run` lists it. */
interface Packed {
  readonly name: string
  readonly files: ReadonlyArray<{ readonly path: string }>
}

/**
 * The library's README and guides are the repository's, copied into its package before it is
 * packed (its `prepack`, which `--ignore-scripts` skips): copied here as `prepack` would.
 */
const copyDocs = Effect.async<void, Error>((resume) => {
  const child = execFile(process.execPath, [join(root, "packages/effect3/scripts/docs.mjs")], { timeout: 30_000 }, (error, _stdout, stderr) =>
    resume(error === null ? Effect.void : Effect.fail(new Error(`scripts/docs.mjs: ${error.message}\n${stderr}`))))
  return Effect.sync(() => child.kill())
})

/** What `npm pack --dry-run` lists in `cwd` with `args`. */
const packList = (cwd: string, args: ReadonlyArray<string>) =>
  Effect.async<ReadonlyArray<Packed>, Error>((resume) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm"
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")))
    const child = execFile(
      npm,
      ["pack", "--dry-run", "--json", "--ignore-scripts", ...args],
      { cwd, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) return resume(Effect.fail(new Error(`npm pack --dry-run in ${cwd}: ${error.message}\n${stderr}`)))
        resume(Effect.try({ try: () => JSON.parse(stdout) as ReadonlyArray<Packed>, catch: (e) => new Error(String(e)) }))
      }
    )
    return Effect.sync(() => child.kill())
  })

/**
 * What `npm pack` would put in the tarball of the library, of every workspace package and of the
 * packages beside the workspace, without building (`--ignore-scripts`: `dist/` is listed only if
 * built, and no Markdown links into it).
 */
const packed = Effect.map(
  Effect.all([
    Effect.flatMap(copyDocs, () => packList(root, ["--workspaces"])),
    ...separate.map((dir) => packList(join(root, dir), []))
  ]),
  (lists) => lists.flat()
)

/** The relative link targets of a Markdown text (code blocks and code spans left out), without their `#fragment`. */
const relativeLinks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1] ?? "")
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("#"))
    .map((target) => decodeURIComponent(target.replace(/#.*$/, "")))

describe("the packed packages", () => {
  it.effect("each carries its README, LICENSE and CHANGELOG.md, named in its files", () =>
    Effect.gen(function*() {
      const packages = (yield* packed).filter((p) => p.name !== conformance.name && p.name !== testSupport.name)
      const manifests = published.map((dir) => manifest(`${dir}/package.json`))
      assert.sameMembers(packages.map((p) => p.name), manifests.map((m) => m.name))
      for (const m of manifests) {
        assert.includeMembers([...(m.files ?? [])], ["LICENSE", "CHANGELOG.md"], m.name)
        const files = packages.find((p) => p.name === m.name)?.files.map((f) => f.path) ?? []
        assert.includeMembers(files, ["package.json", "README.md", "LICENSE", "CHANGELOG.md"], m.name)
      }
      // The library's README links to its docs: they ship with it.
      const libraryFiles = packages.find((p) => p.name === library.name)?.files.map((f) => f.path) ?? []
      assert.includeMembers(libraryFiles, ["docs/sessions.md", "docs/errors.md", "docs/cli.md"])
      assert.notInclude(libraryFiles.join(" "), "docs/api/")
      assert.notInclude(libraryFiles, "bench/RESULTS.md")
    }), 90_000)

  it.effect("every relative link of the Markdown a tarball ships resolves to a file of that tarball", () =>
    Effect.gen(function*() {
      const packages = (yield* packed).filter((p) => p.name !== conformance.name && p.name !== testSupport.name)
      const dirs = new Map([...[...(workspace.workspaces ?? []), ...separate].map((dir) => [manifest(`${dir}/package.json`).name, dir] as const)])
      const dead: Array<string> = []
      let checked = 0
      for (const p of packages) {
        const dir = dirs.get(p.name) ?? "."
        const files = new Set(p.files.map((f) => f.path))
        const found = (path: string) => files.has(path) || [...files].some((file) => file.startsWith(`${path}/`))
        for (const markdown of [...files].filter((path) => path.endsWith(".md"))) {
          for (const link of relativeLinks(readFileSync(join(root, dir, markdown), "utf8"))) {
            checked += 1
            const target = normalize(join(dirname(markdown), link)).replace(/\/$/, "")
            if (target.startsWith("..") || !found(target)) dead.push(`${p.name}: ${markdown} -> ${link}`)
          }
        }
      }
      assert.isAtLeast(checked, 30, "links were checked")
      assert.deepStrictEqual(dead, [])
    }), 90_000)
})
