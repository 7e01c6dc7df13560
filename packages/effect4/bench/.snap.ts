import * as V8 from "node:v8"
import { holdStarted } from "./sdk.js"
const url = process.argv[2]!
const gc = (globalThis as { gc?: () => void }).gc!
const warm = await holdStarted(url, 20, 20)
await warm.close()
await new Promise((r) => setTimeout(r, 100)); gc(); gc()
V8.writeHeapSnapshot("/tmp/e4-before.heapsnapshot")
const held = await holdStarted(url, 800, 200)
await new Promise((r) => setTimeout(r, 300)); gc(); gc()
V8.writeHeapSnapshot("/tmp/e4-after.heapsnapshot")
void held
process.exit(0)
