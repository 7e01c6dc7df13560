#!/usr/bin/env node
// The package's README and guides are the repository's: its `README.md` and `docs/*.md` (not the
// generated `docs/api/`), copied here before the package is packed (`prepack`) so that the
// tarball, and the package's page on the registry, carry them. A relative link into this package
// (`packages/effect3/examples`, `../packages/effect3/src/Errors.ts`) is rewritten to where the
// target lies in the tarball (`examples`, `../src/Errors.ts`). The copies are not committed
// (.gitignore): edit the repository's files.
//
//   node scripts/docs.mjs   copies them (nothing to do in an installed package, which has no
//                           repository around it and ships its copies)
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const packageDir = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const repository = Path.resolve(packageDir, "..", "..")
const here = Path.relative(repository, packageDir).split(Path.sep).join("/")

/** A Markdown text whose relative links into this package are made relative to the package. */
const inPackage = (text) => text.replace(new RegExp(`\\]\\(((?:\\.\\./)*)${here}/`, "g"), "]($1")

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
    const text = inPackage(Fs.readFileSync(Path.join(repository, rel), "utf8"))
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
