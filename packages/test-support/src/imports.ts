/**
 * What a package's sources import, for the tests that hold a package to its allowed imports (the
 * core's and the shared glue's purity tests): every `.ts` file under a folder, and every module
 * specifier a file names.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"

/** Every `.ts` file under a folder, at any depth. */
export const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** Every module specifier of a file's text (its comments, such as TSDoc examples, aside). */
export const specifiers = (source: string): Array<string> => {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1] ?? "")
}
