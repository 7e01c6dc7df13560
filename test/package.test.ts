/**
 * The two packages of the workspace say the same things: the library's run-time dependencies are
 * what it imports (`ws`; Effect as peers), the command line's are its own, and the versions and
 * ranges agree. The packed result is exercised by test/consumer/consumer.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { version as cliVersion } from "../packages/cli/src/version.js"

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
}

const root = join(import.meta.dirname, "..")
const manifest = (path: string): Manifest => JSON.parse(readFileSync(join(root, path), "utf8")) as Manifest
const library = manifest("package.json")
const cli = manifest("packages/cli/package.json")
/** The packages of the `effect-agent-session/cluster` entry point: optional peers. */
const clusterPeers = ["@effect/cluster", "@effect/rpc", "@effect/sql", "@effect/sql-pg"]
const requiredPeers = Object.fromEntries(
  Object.entries(library.peerDependencies ?? {}).filter(([name]) => library.peerDependenciesMeta?.[name]?.optional !== true)
)

describe("package manifests", () => {
  it("the library depends at run time on ws only, Effect as peers; no bin, built by prepack", () => {
    assert.strictEqual(library.name, "effect-agent-session")
    assert.deepStrictEqual(Object.keys(library.dependencies ?? {}), ["ws"])
    assert.deepStrictEqual(Object.keys(requiredPeers).sort(), [
      "@effect/platform",
      "@effect/platform-node",
      "effect"
    ])
    // The cluster entry point's packages are optional peers: a library user installs none of them.
    assert.deepStrictEqual(
      Object.keys(library.peerDependencies ?? {}).filter((name) => !(name in requiredPeers)).sort(),
      clusterPeers
    )
    assert.isUndefined(library.bin)
    assert.include(library.files ?? [], "dist")
    assert.match(library.scripts?.["prepack"] ?? "", /build/)
    // The command line, and the Effect 4 edition (docs/editions.md): packages of their own.
    assert.deepStrictEqual(library.workspaces, ["packages/cli", "packages/effect4"])
    for (const name of ["tsx", "@effect/cli", "@effect/printer", "@effect/printer-ansi"]) {
      assert.notProperty(library.dependencies ?? {}, name)
    }
  })

  it("the command line is its own package: bin effect-agent-session running dist, the library as a dependency", () => {
    assert.strictEqual(cli.name, "effect-agent-session-cli")
    assert.deepStrictEqual(cli.bin, { "effect-agent-session": "bin/effect-agent-session.js" })
    assert.match(readFileSync(join(root, "packages/cli/bin/effect-agent-session.js"), "utf8"), /import "\.\.\/dist\/main\.js"/)
    assert.deepStrictEqual(cli.files, ["bin", "dist"])
    assert.match(cli.scripts?.["prepack"] ?? "", /build/)
    assert.strictEqual(cli.dependencies?.["effect-agent-session"], `^${library.version}`)
    assert.property(cli.dependencies ?? {}, "@effect/cli")
    assert.deepStrictEqual(cli.peerDependencies, requiredPeers)
    // The command line's cluster commands (runner, watch, answer) bring the cluster's packages.
    for (const name of clusterPeers) assert.strictEqual(cli.dependencies?.[name], library.peerDependencies?.[name], name)
    assert.strictEqual(cliVersion, cli.version)
  })

  it("the peer ranges are the Effect 3 line the README's install commands name", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const peers = library.peerDependencies ?? {}
    // effect ^3.22.4 is installed by `effect@^3.22`; both exclude Effect 4.
    for (const [name, range] of Object.entries(peers)) {
      const minor = range.replace(/^\^/, "").split(".").slice(0, 2).join(".")
      assert.include(readme, `${name}@^${minor}`, name)
      assert.strictEqual(library.devDependencies?.[name], range, `${name}: dev and peer ranges agree`)
    }
    assert.match(peers["effect"] ?? "", /^\^3\./)
  })
})
