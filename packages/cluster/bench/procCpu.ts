/**
 * CPU time of a process from `/proc` (Linux), for the cluster benches: the whole process, and the
 * part spent off its main (JavaScript) thread.
 */
import { readFileSync } from "node:fs"

/** User + system CPU time of a `/proc` `stat` file (a process's or one thread's) so far, in ms (clock ticks of 10 ms). */
const statCpuMs = (file: string): number => {
  try {
    const fields = readFileSync(file, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

/** CPU time (user + system) of a process so far, in ms. */
export const cpuMs = (pid: number | undefined): number => statCpuMs(`/proc/${pid}/stat`)

/**
 * CPU time of a process's threads other than its main one, so far, in ms: V8's helper threads
 * (the garbage collector's concurrent marking and parallel scavenging, the optimizing compiler's
 * background work) and libuv's pool. The part of each is not told apart.
 */
export const offMainCpuMs = (pid: number | undefined): number => cpuMs(pid) - statCpuMs(`/proc/${pid}/task/${pid}/stat`)
