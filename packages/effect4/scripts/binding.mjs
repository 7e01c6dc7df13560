#!/usr/bin/env node
// The Effect binding written once for both editions: the Effect 3 edition's `binding/`
// (`packages/effect3/binding`: TypeScript that reads the same on Effect 3 and Effect 4, the names
// that differ behind each edition's `src/internal/line.ts`) is compiled by that edition where it
// lies, and copied here, as this package's `binding/`, to be compiled against Effect 4: a copy's
// imports (`effect/...`, and `../src/...` for this edition's own modules) resolve from this
// package. The copies are not committed (.gitignore); `scripts/node22.mjs` makes them before every tool it runs, the build
// before compiling, so an edit of `binding/` is seen by the next typecheck, lint, test or build.
// A binding module imports this package's modules by relative paths, never by the package's
// name: the name appears only in its documentation's examples (`from "effect-agent-session"`),
// which the copy names this package by, so the reference generated from it shows what an
// application of this edition imports.
//
// The Effect 3 edition's `test/shared/` is copied the same way, to `test/shared/` here: the tests
// written once for both editions, which take from the edition's `test/helpers/line.ts` what the
// two lines name differently, and from its `src/` and `test/helpers/` the rest.
//
//   node scripts/binding.mjs   copies the binding and the shared tests (nothing to do in an installed package, which has
//                              no repository around it and ships its copies)
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const packageDir = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const effect3 = Path.resolve(packageDir, "..", "effect3")
/**
 * What is copied, each to the same place here: the binding, and the tests written once for both
 * editions (`test/shared/`, whose imports reach the edition's `src/` and `test/helpers/`).
 */
const trees = ["binding", Path.join("test", "shared")]

/**
 * The cluster edition's binding, written once for both lines the same way: the Effect 3 cluster
 * edition's `binding/` (`packages/cluster/binding`, its line's names behind its
 * `src/internal/line.ts`) is copied to `cluster/binding/` here, beside this edition's cluster
 * (`cluster/src/`, whose `internal/line.ts` binds the same names to Effect 4). Its examples import
 * `effect-agent-session-cluster`, which the copy names `<this package>/cluster`.
 */
const clusterTree = { source: Path.resolve(packageDir, "..", "cluster", "binding"), target: Path.join(packageDir, "cluster", "binding") }
/** The cluster's tests written once for both lines: `packages/cluster/test/shared` to `cluster/test/shared` here. */
const clusterTests = {
  source: Path.resolve(packageDir, "..", "cluster", "test", "shared"),
  target: Path.join(packageDir, "cluster", "test", "shared")
}

/** The .ts files under a directory, relative to it. */
const sources = (dir, rel = "") =>
  Fs.readdirSync(Path.join(dir, rel), { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(rel, entry.name)
    if (entry.isDirectory()) return sources(dir, path)
    return entry.isFile() && entry.name.endsWith(".ts") ? [path] : []
  })

const packageName = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8")).name

/**
 * The text of a binding module as this package holds it: the examples of its doc comments (lines
 * that start with `*`) import this package; its code is copied as it is.
 */
const asThisPackage = (text) =>
  text
    .split("\n")
    .map((line) =>
      /^\s*\*/.test(line)
        ? line
          .replace(/from "effect-agent-session(?=["/])/g, `from "${packageName}`)
          .replace(/from "effect-agent-session-cluster(?=["/])/g, `from "${packageName}/cluster`)
        : line
    )
    .join("\n")

const header = (origin, rel) =>
  `// Generated from packages/${Path.join(origin, rel).split(Path.sep).join("/")} by scripts/binding.mjs: edit that file, not this copy.\n`

/** Copies `binding/` and `test/shared/` here: files written only when they differ, files no longer there removed. */
export const syncBinding = () => {
  for (const tree of trees) syncTree(Path.join(effect3, tree), Path.join(packageDir, tree), Path.join("effect3", tree))
  syncTree(clusterTree.source, clusterTree.target, Path.join("cluster", "binding"))
  syncTree(clusterTests.source, clusterTests.target, Path.join("cluster", "test", "shared"))
}

const syncTree = (source, target, origin) => {
  if (!Fs.existsSync(source)) return
  const wanted = new Set(sources(source))
  for (const rel of wanted) {
    const text = header(origin, rel) + asThisPackage(Fs.readFileSync(Path.join(source, rel), "utf8"))
    const file = Path.join(target, rel)
    if (Fs.existsSync(file) && Fs.readFileSync(file, "utf8") === text) continue
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, text)
  }
  if (!Fs.existsSync(target)) return
  for (const rel of sources(target)) {
    if (!wanted.has(rel)) Fs.rmSync(Path.join(target, rel))
  }
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === Url.fileURLToPath(import.meta.url)) {
  syncBinding()
}
