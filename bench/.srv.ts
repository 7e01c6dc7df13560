import { startServer } from "./processes.js"
import { execFileSync } from "node:child_process"
const server = await startServer("loadgen.ts", ["0", "1000"])
try {
  execFileSync("sh", ["-c", `ulimit -n 65000; TSX_TSCONFIG_PATH=/work/main/tsconfig.build.json ${process.argv[2]} --import tsx --expose-gc packages/effect4/bench/.snap.ts ${server.url}`], { stdio: "inherit" })
} finally { await server.stop() }
