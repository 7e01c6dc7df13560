/**
 * What grew between two heap snapshots (V8's `.heapsnapshot`): objects grouped by type and
 * constructor (or, for closures, by function name), counted with their own (shallow) sizes,
 * sorted by growth. `--per <n>` divides the growth by n (the sessions added between the two).
 * `--where` groups closures by where their function is written (file:line:column) instead.
 *
 *   npx tsx bench/heapSummary.ts <before.heapsnapshot> <after.heapsnapshot> [--per 800] [--top 40] [--where]
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: ReadonlyArray<unknown>
      readonly edge_fields: ReadonlyArray<string>
      readonly edge_types: ReadonlyArray<unknown>
      readonly location_fields: ReadonlyArray<string>
    }
  }
  readonly nodes: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly locations: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

const WHERE = process.argv.includes("--where")

const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback
}

const groups = (file: string): Map<string, { count: number; size: number }> => {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0] as ReadonlyArray<string>
  const width = fields.length
  const typeAt = fields.indexOf("type")
  const nameAt = fields.indexOf("name")
  const sizeAt = fields.indexOf("self_size")
  const out = new Map<string, { count: number; size: number }>()
  // With --where: each closure's file (closure -> shared -> script -> name) and its location.
  const where = new Map<number, string>()
  if (WHERE) {
    const edgeWidth = snap.snapshot.meta.edge_fields.length
    const edgeTypes = snap.snapshot.meta.edge_types[0] as ReadonlyArray<string>
    const countAt = fields.indexOf("edge_count")
    const firstEdge = new Int32Array(snap.nodes.length / width + 1)
    for (let n = 0, e = 0; n < snap.nodes.length / width; n++) {
      firstEdge[n] = e
      e += snap.nodes[n * width + countAt]! * edgeWidth
    }
    const edgeTo = (node: number, name: string): number | undefined => {
      const from = firstEdge[node]!
      const to = from + snap.nodes[node * width + countAt]! * edgeWidth
      for (let e = from; e < to; e += edgeWidth) {
        const type = edgeTypes[snap.edges[e]!]
        if (type === "element" || type === "hidden") continue
        if (snap.strings[snap.edges[e + 1]!] === name) return snap.edges[e + 2]! / width
      }
      return undefined
    }
    const lw = snap.snapshot.meta.location_fields.length
    for (let l = 0; l < snap.locations.length; l += lw) {
      const node = snap.locations[l]! / width
      const shared = edgeTo(node, "shared")
      // (V8 11: the script is `script_or_debug_info`, named by its URL; older: `script` -> `name`.)
      const script = shared === undefined ? undefined : edgeTo(shared, "script_or_debug_info") ?? edgeTo(shared, "script")
      const file = script === undefined ? undefined : script
      const name = file === undefined ? "?" : (snap.strings[snap.nodes[file * width + nameAt]!] ?? "?").replace(/^.*node_modules\//, "").replace(/^.*\/src\//, "src/").replace("/dist/esm/", "/")
      where.set(node, `${name}:${snap.locations[l + 2]! + 1}:${snap.locations[l + 3]! + 1}`)
    }
  }
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!
    const rawName = type === "closure" && WHERE ? where.get(i / width) ?? "?" : snap.strings[snap.nodes[i + nameAt]!] ?? ""
    // Strings and numbers are grouped by type only (their "name" is their value).
    const name = type === "string" || type === "number" || type === "concatenated string" || type === "sliced string"
      ? ""
      : rawName.slice(0, 100)
    const key = `${type}:${name}`
    const entry = out.get(key) ?? { count: 0, size: 0 }
    entry.count += 1
    entry.size += snap.nodes[i + sizeAt]!
    out.set(key, entry)
  }
  return out
}

const [beforeFile, afterFile] = process.argv.slice(2).filter((a) => !a.startsWith("--") && !/^\d+$/.test(a))
const per = Number(flag("per", "1"))
const top = Number(flag("top", "40"))
const before = groups(beforeFile!)
const after = groups(afterFile!)
const rows = [...after.entries()].map(([key, a]) => {
  const b = before.get(key) ?? { count: 0, size: 0 }
  return { key, count: (a.count - b.count) / per, size: (a.size - b.size) / per }
}).sort((x, y) => y.size - x.size)
const total = rows.reduce((s, r) => s + r.size, 0)
process.stdout.write(`total growth: ${(total / 1024).toFixed(1)} KiB${per === 1 ? "" : ` per unit (${per})`}\n`)
process.stdout.write("| type:name | count | bytes |\n| --- | --- | --- |\n")
for (const r of rows.slice(0, top)) process.stdout.write(`| ${r.key} | ${r.count.toFixed(1)} | ${r.size.toFixed(0)} |\n`)
