/**
 * The Effect 4 edition's measured client process, on Node 22:
 * `node22 --import tsx --expose-gc packages/effect4/bench/child.ts '<task as JSON>'`, started by
 * the root's bench/effect4.ts. Like bench/child.ts (whose raw clients the same harness runs on
 * Node 22 for the raw side), it runs one task, sends the result to its parent, and exits: the
 * SDK never shares a heap, a JIT or a GC with what it is compared with.
 */
import type { Effect4Task } from "effect-agent-session-test-support/effect4Tasks"
import { createRequest, fullGc, heapSummary, memory, profiled, runAsChild } from "effect-agent-session-test-support/measure"

/** Runs one task. */
export const runTask = async (task: Effect4Task): Promise<unknown> => {
  switch (task.kind) {
    case "throughput": {
      const run = task.variant === "floor"
        ? (await import("./floors.js")).throughputStream
        : task.variant === "attach"
        ? (await import("./sdk.js")).throughputAttach
        : (await import("./sdk.js")).throughput
      if (task.warmup > 0) await run(task.url, task.warmup)
      fullGc()
      return profiled(`e4-throughput-${task.variant}`, async () => {
        const cpu = process.cpuUsage()
        const result = await run(task.url, task.n)
        const used = process.cpuUsage(cpu)
        return { ...result, cpuMs: (used.user + used.system) / 1000 }
      })
    }
    case "memory":
    case "heap": {
      const variant = task.variant
      const hold = variant === "sdk"
        ? (await import("./sdk.js"))[task.path === "start" ? "holdStarted" : "hold"]
        : (url: string, count: number, concurrency: number) =>
          import("./floors.js").then((floors) => floors.hold(variant, url, count, concurrency))
      return task.kind === "heap"
        ? heapSummary(hold, task.url, task.count, task.concurrency)
        : profiled(`e4-memory-${variant}${task.path === "start" ? "-start" : ""}`, () => memory(hold, task.url, task.count, task.concurrency))
    }
    case "fibers": {
      const variant = task.variant
      return variant === "sdk"
        ? (await import("./sdk.js")).countFibers(task.url, task.count, task.concurrency)
        : (await import("./floors.js")).countFibers(variant, task.url, task.count, task.concurrency)
    }
    case "firstEvent": {
      const firstEvent = task.variant === "floor" ? (await import("./floors.js")).firstEvent : (await import("./sdk.js")).firstEvent
      return firstEvent(task.baseUrl, task.apiKey, createRequest, {
        sessions: task.sessions,
        warmup: task.warmup,
        events: task.events,
        measure: (body) => profiled(`e4-firstEvent-${task.variant}`, body)
      })
    }
  }
}

runAsChild(import.meta.url, runTask)
