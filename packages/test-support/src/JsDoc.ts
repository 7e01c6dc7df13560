/**
 * Reads the JSDoc of the public modules with the TypeScript parser: which exports lack a summary,
 * `@since` or `@category`, and the ```ts blocks of `@example` tags (to type-check them).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

/** The repository root (this file is `packages/test-support/src/JsDoc.ts`). */
export const root = join(import.meta.dirname, "..", "..", "..")

/** The Effect 3 edition (`effect-agent-session`), relative to the root. */
export const effect3 = "packages/effect3"

/** The categories an export may carry (docs: style.md). */
export const categories: ReadonlySet<string> = new Set([
  "models",
  "constructors",
  "layers",
  "errors",
  "tags",
  "combinators",
  "accessors",
  "guards"
])

/**
 * The public modules, relative to the root: every `src/*.ts` of the Effect 3 edition but the barrel, the test kit (its
 * declarations written once for both editions in `binding/testing/`, which its `src/` module
 * re-exports; the package's `.`, `./testing` and `./*` entry points), the simulator's
 * (`effect-agent-session-simulator`) and the cluster's (`effect-agent-session-cluster`), every `binding/*.ts` (the
 * declarations of a public module written once for both editions, which its `src/*.ts`
 * re-exports), every module of the protocol core (`effect-agent-session-core`) and of the
 * editions' shared glue (`effect-agent-session-shell`).
 */
export const publicModules = (): ReadonlyArray<string> => [
  ...["packages/core/src", "packages/shell/src"].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((name) => name.endsWith(".ts") && name !== "index.ts")
      .sort()
      .map((name) => `${dir}/${name}`)
  ),
  ...readdirSync(join(root, effect3, "src"))
    .filter((name) => name.endsWith(".ts") && name !== "index.ts")
    .sort()
    .map((name) => `${effect3}/src/${name}`),
  ...bindingModules(),
  `${effect3}/src/testing/AgentSessionsTest.ts`,
  `${effect3}/binding/testing/AgentSessionsTest.ts`,
  "packages/simulator/src/Simulator.ts",
  "packages/simulator/src/Script.ts",
  "packages/cluster/src/ClusterSessions.ts",
  "packages/cluster/src/EventLog.ts",
  "packages/cluster/src/NodeClusterSessions.ts",
  "packages/cluster/src/SessionEntity.ts",
  // The cluster's declarations written once for both cluster editions, which its src/ modules re-export.
  ...readdirSync(join(root, "packages/cluster/binding"))
    .filter((name) => name.endsWith(".ts"))
    .sort()
    .map((name) => `packages/cluster/binding/${name}`)
]

/**
 * The public modules' declarations written once for both editions, relative to the root: every
 * `binding/*.ts` (the modules of `binding/internal/` are not public).
 */
export const bindingModules = (): ReadonlyArray<string> =>
  readdirSync(join(root, effect3, "binding"), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => `${effect3}/binding/${entry.name}`)
    .sort()

/** The barrels, whose module comments name the entry points. */
export const entryPoints: ReadonlyArray<string> = [
  "packages/core/src/index.ts",
  "packages/shell/src/index.ts",
  `${effect3}/src/index.ts`,
  `${effect3}/src/testing/index.ts`,
  "packages/simulator/src/index.ts",
  "packages/cluster/src/index.ts"
]

const parse = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true)

const commentText = (comment: string | ts.NodeArray<ts.JSDocComment> | undefined): string =>
  comment === undefined ? "" : typeof comment === "string" ? comment : ts.getTextOfJSDocComment(comment) ?? ""

interface DocOf {
  readonly summary: string
  readonly tags: ReadonlyArray<{ readonly name: string; readonly text: string }>
}

const docsOf = (node: ts.Node): ReadonlyArray<DocOf> =>
  ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).map((doc) => ({
    summary: commentText(doc.comment).trim(),
    tags: (doc.tags ?? []).map((tag) => ({ name: tag.tagName.text, text: commentText(tag.comment).trim() }))
  }))

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)

/** The exported declarations of a module, by name (a value and its type companion share a name). */
const exportedDeclarations = (source: ts.SourceFile): ReadonlyMap<string, ReadonlyArray<ts.Node>> => {
  const byName = new Map<string, Array<ts.Node>>()
  const add = (name: string, node: ts.Node) => byName.set(name, [...(byName.get(name) ?? []), node])
  for (const statement of source.statements) {
    if (!isExported(statement)) continue
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) add(declaration.name.text, declaration)
      }
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement) || ts.isModuleDeclaration(statement)) &&
      statement.name !== undefined
    ) {
      add(statement.name.text, statement)
    }
  }
  return byName
}

/** An export whose JSDoc lacks something. */
export interface Finding {
  readonly file: string
  readonly name: string
  readonly missing: ReadonlyArray<string>
}

/**
 * The exports of a module that lack a summary, `@since` or a known `@category`. A value and its
 * type companion (same name) count as one export: one summary between them is enough.
 */
export const undocumented = (file: string): ReadonlyArray<Finding> => {
  const findings: Array<Finding> = []
  const source = parse(file)
  const overview = ts.getLeadingCommentRanges(source.text, 0) ?? []
  if (overview.length === 0 || !source.text.slice(overview[0]?.pos ?? 0, overview[0]?.end ?? 0).includes("@since")) {
    findings.push({ file, name: "(module overview)", missing: ["@since"] })
  }
  for (const [name, declarations] of exportedDeclarations(source)) {
    const docs = declarations.flatMap(docsOf)
    const missing: Array<string> = []
    if (!docs.some((doc) => doc.summary.length > 0)) missing.push("summary")
    if (!docs.some((doc) => doc.tags.some((tag) => tag.name === "since" && tag.text.length > 0))) missing.push("@since")
    const category = docs.flatMap((doc) => doc.tags).filter((tag) => tag.name === "category")
    if (category.length === 0) missing.push("@category")
    for (const tag of category) {
      if (!categories.has(tag.text)) missing.push(`@category ${tag.text} (not one of ${[...categories].join(", ")})`)
    }
    if (missing.length > 0) findings.push({ file, name, missing })
  }
  return findings
}

/** A ```ts block of an `@example` tag. */
export interface Example {
  readonly file: string
  /** The line of the block's opening fence (1-based). */
  readonly line: number
  readonly code: string
}

/** The ```ts blocks of every `@example` tag of a module (the module overview included). */
export const examples = (file: string): ReadonlyArray<Example> => {
  const text = readFileSync(join(root, file), "utf8")
  const found: Array<Example> = []
  // Every JSDoc comment, then its @example sections, then their fenced blocks.
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const body = comment[0]
    const at = comment.index
    const lines = body.split("\n").map((line) => line.replace(/^\s*\/?\*\*?\/?\s?/, "").replace(/\*\/\s*$/, ""))
    let inExample = false
    let inBlock = false
    let start = 0
    let code: Array<string> = []
    lines.forEach((line, index) => {
      if (/^@\w+/.test(line) && !inBlock) inExample = line.startsWith("@example")
      if (!inExample) return
      if (!inBlock && /^```(ts|typescript)\s*$/.test(line.trim())) {
        inBlock = true
        start = index
        code = []
      } else if (inBlock && line.trim() === "```") {
        inBlock = false
        const line0 = text.slice(0, at).split("\n").length + start
        found.push({ file, line: line0, code: code.join("\n") })
      } else if (inBlock) {
        code.push(line)
      }
    })
  }
  return found
}

/** An example rewritten to compile inside the repository: package imports point at the packages' `src/`. */
export const rewriteImports = (code: string, fromDir: string): string => {
  const target = (path: string) => {
    const rel = relative(fromDir, join(root, path)).split("\\").join("/")
    return rel.startsWith(".") ? rel : `./${rel}`
  }
  const rewritten = code
    .replace(/from "effect-agent-session"/g, `from "${target(`${effect3}/src/index.js`)}"`)
    .replace(/from "effect-agent-session\/testing"/g, `from "${target(`${effect3}/src/testing/index.js`)}"`)
    .replace(/from "effect-agent-session-simulator"/g, `from "${target("packages/simulator/src/index.js")}"`)
    .replace(/from "effect-agent-session-cluster"/g, `from "${target("packages/cluster/src/index.js")}"`)
    .replace(/from "effect-agent-session\/([A-Za-z]+)"/g, (_, module: string) => `from "${target(`${effect3}/src/${module}.js`)}"`)
  // Every example is a module of its own, so top-level names never clash.
  return /^\s*(import|export)\s/m.test(rewritten) ? rewritten : `${rewritten}\nexport {}\n`
}
