/**
 * The ```ts blocks of the README and of `docs/*.md`, and what each is. A block's info string says
 * it, so a reader sees it too:
 *
 * - ```` ```ts ````: a whole program. Either it runs itself (`NodeRuntime.runMain`,
 *   `Effect.runPromise`, ...) or it defines `const program`, an Effect that needs at most the
 *   services of `NodeAgentSessions.layerConfig()`. Both are run against the default simulator by
 *   test/docs-programs.test.ts.
 * - ```` ```ts fragment ````: a piece of a program (layers, a function, handlers); compiled only.
 * - ```` ```ts postgres ````: a program that needs PostgreSQL (the cluster edition); compiled only
 *   here, since this suite has no database.
 * - ```` ```ts test ````: a test file (`@effect/vitest`); run by test/docs-programs.test.ts.
 * - ```` ```ts effect4 ````: a whole program of the Effect 4 edition (the scale-out walk-through's);
 *   not written out here (these tests compile against Effect 3): the Effect 4 edition's suite
 *   compiles it (packages/effect4/test/docs.test.ts) and runs it.
 *
 * Every block compiles (test/docs-examples.test.ts). A block whose first line is a comment naming
 * a file (`// app.ts`) keeps that name, so that another block can import it (`./app.js`).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { rewriteImports, root } from "./JsDoc.js"

/** What a block is, from its info string. */
export type Kind = "program" | "fragment" | "postgres" | "test" | "effect4"

/** A ```ts block of a Markdown document. */
export interface DocBlock {
  readonly file: string
  /** The line of the block's opening fence (1-based). */
  readonly line: number
  readonly code: string
  /** The file name its first line gives (`// app.ts`), if any. */
  readonly name: string | undefined
  readonly kind: Kind
  /** The info string after the language, as written (`fragment`, ...): unknown words are reported. */
  readonly info: string
}

/**
 * The documents whose blocks are checked: the README, every page of `docs/` (not the generated
 * `docs/api/`), and the protocol core's README.
 */
export const documents = (): ReadonlyArray<string> => [
  "README.md",
  "packages/core/README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`)
]

const kinds: ReadonlyArray<Kind> = ["fragment", "postgres", "test", "effect4"]

/** The ```ts blocks of a Markdown document, with their kind. */
export const docBlocks = (file: string): ReadonlyArray<DocBlock> => {
  const lines = readFileSync(join(root, file), "utf8").split("\n")
  const found: Array<DocBlock> = []
  let start = -1
  let info = ""
  let code: Array<string> = []
  lines.forEach((line, index) => {
    const open = /^```(?:ts|typescript)(?:\s+(.*))?$/.exec(line)
    if (start < 0 && open !== null) {
      start = index
      info = (open[1] ?? "").trim()
      code = []
    } else if (start >= 0 && /^```\s*$/.test(line)) {
      const name = /^\/\/ ([\w.-]+\.ts)\s*$/.exec(code[0] ?? "")?.[1]
      const word = info.split(/\s+/)[0] ?? ""
      const kind = kinds.find((k) => k === word) ?? "program"
      found.push({ file, line: start + 1, code: code.join("\n"), name, kind, info })
      start = -1
    } else if (start >= 0) {
      code.push(line)
    }
  })
  return found
}

/** A program that runs itself (`NodeRuntime.runMain`, `Effect.runPromise`, ...): it is run as a child process. */
export const runsItself = (block: DocBlock): boolean => /\b(runMain|runPromise|runPromiseExit|runFork|runSync)\b/.test(block.code)

/** A block that defines `program`: the test runs it with the SDK's layer provided. */
export const definesProgram = (block: DocBlock): boolean => /^(export\s+)?const program\b/m.test(block.code)

/** What is wrong with a block's marking, if anything: a program must be whole, a fragment must not be one. */
export const misMarked = (block: DocBlock): string | undefined => {
  const where = `${block.file}:${block.line}`
  const whole = runsItself(block) || definesProgram(block)
  if (block.info !== "" && !kinds.some((k) => block.info === k || block.info.startsWith(`${k} `))) {
    return `${where}: unknown info string "ts ${block.info}" (one of: ts, ts ${kinds.join(", ts ")})`
  }
  switch (block.kind) {
    case "program":
      return whole ? undefined : `${where}: not a whole program (it neither runs itself nor defines \`program\`): mark it \`\`\`ts fragment`
    case "fragment":
      return whole ? `${where}: marked fragment but it is a program: unmark it, so that it runs` : undefined
    case "postgres":
    case "effect4":
      return whole ? undefined : `${where}: marked ${block.kind} but it is not a program`
    case "test":
      return /\b(describe|it)(\.\w+)?\(/.test(block.code) ? undefined : `${where}: marked test but it declares no test`
  }
}

/** A block written out as a module. */
export interface Written {
  readonly block: DocBlock
  /** The module's path. */
  readonly path: string
}

/**
 * Writes every block of the documents under `outDir` (one folder per document), imports of
 * `effect-agent-session` pointed at `src/`. A block that defines `program` also exports it as
 * `docProgram`, so that a test can import and run it.
 */
export const writeBlocks = (outDir: string): ReadonlyArray<Written> => {
  const written: Array<Written> = []
  for (const document of documents()) {
    const dir = join(outDir, basename(document, ".md"))
    mkdirSync(dir, { recursive: true })
    for (const block of docBlocks(document).filter((block) => block.kind !== "effect4")) {
      const path = join(dir, block.name ?? `L${block.line}.ts`)
      const exported = definesProgram(block) && !runsItself(block) ? "\nexport { program as docProgram }\n" : ""
      writeFileSync(path, `// ${block.file}:${block.line}\n${rewriteImports(block.code, dir)}\n${exported}`)
      written.push({ block, path })
    }
  }
  return written
}

/** A command a document shows: a line of a ```sh block, or a `$ ` line of a transcript. */
export interface Command {
  readonly doc: string
  readonly line: string
  /** For a transcript's command: the first line it shows printed. */
  readonly shows?: string | undefined
}

/** The commands of a Markdown text, in order. */
export const commandsOf = (doc: string, markdown: string): ReadonlyArray<Command> =>
  [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)].flatMap((match): Array<Command> => {
    const info = (match[1] ?? "").trim()
    const lines = (match[2] ?? "").replace(/\\\n\s*/g, " ").split("\n")
    if (info === "sh") {
      return lines.map((line) => line.replace(/\s+#.*$/, "").replace(/\s+/g, " ").trim()).filter((line) => line !== "")
        .map((line) => ({ doc, line }))
    }
    if (info !== "") return []
    return lines.flatMap((line, i) => {
      // `echo $?` shows the exit code of the command before it: the line it shows is checked there.
      if (!line.startsWith("$ ") || line === "$ echo $?") return []
      const next = lines[i + 1]
      return [{ doc, line: line.slice(2).trim(), shows: next === undefined || next.startsWith("$ ") ? undefined : next.trim() }]
    })
  })
