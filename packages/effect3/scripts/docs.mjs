#!/usr/bin/env node
// The package's README and guides are the repository's: its `README.md` and `docs/*.md` (not the
// generated `docs/api/`), copied here before the package is packed (`prepack`) so that the
// tarball, and the package's page on the registry, carry them. Their relative links are made to
// hold in the tarball: one into this package (`../packages/effect3/src/Errors.ts`) points where
// its target lies in it (`../src/Errors.ts`); one between the copied documents, or to the
// LICENSE, stays; one to the rest of the repository (`../examples/quickstart.ts`), which the
// tarball does not hold, becomes its text. The copies are not committed (.gitignore): edit the
// repository's files.
//
//   node scripts/docs.mjs   copies them (nothing to do in an installed package, which has no
//                           repository around it and ships its copies)
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const packageDir = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const repository = Path.resolve(packageDir, "..", "..")
const here = Path.relative(repository, packageDir).split(Path.sep).join("/")

/**
 * A document of the repository (`rel`, one of `copied`) with its relative links made to hold where
 * it lies in the tarball.
 */
const inPackage = (rel, text, copied) =>
  text.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (link, label, target) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) return link
    const [path, fragment] = target.split(/(?=#)/)
    const inRepository = Path.posix.normalize(Path.posix.join(Path.posix.dirname(rel), path))
    if (inRepository.startsWith(`${here}/`) || inRepository === here) {
      const inTarball = Path.posix.relative(Path.posix.dirname(rel), inRepository.slice(here.length + 1) || ".")
      return `[${label}](${inTarball}${fragment ?? ""})`
    }
    return copied.includes(inRepository) || inRepository === "LICENSE" ? link : label
  })

/** The README and `docs/*.md`: paths relative to the repository, and so to this package. */
const documents = () => [
  "README.md",
  ...Fs.readdirSync(Path.join(repository, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`)
]

/** Copies the documents here: files written only when they differ, guides no longer there removed. */
export const syncDocs = () => {
  if (!Fs.existsSync(Path.join(repository, "docs"))) return
  const wanted = documents()
  for (const rel of wanted) {
    const text = inPackage(rel, Fs.readFileSync(Path.join(repository, rel), "utf8"), wanted)
    const file = Path.join(packageDir, rel)
    if (Fs.existsSync(file) && Fs.readFileSync(file, "utf8") === text) continue
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, text)
  }
  const docs = Path.join(packageDir, "docs")
  for (const name of Fs.existsSync(docs) ? Fs.readdirSync(docs) : []) {
    if (!wanted.includes(`docs/${name}`)) Fs.rmSync(Path.join(docs, name), { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === Url.fileURLToPath(import.meta.url)) {
  syncDocs()
}
