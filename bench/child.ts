/**
 * The measured client process: `node --import tsx --expose-gc bench/child.ts '<task as JSON>'`.
 * It runs one task against the load generator (or the simulator), sends the result to its parent
 * over IPC (or prints it), and exits. One process per measurement keeps the sides apart: the SDK
 * never shares a heap, a JIT or a GC with the raw client it is compared with.
 */
import {
  createRequest,
  fullGc,
  heapSampler,
  type HeapSample,
  memory,
  type MemoryResult,
  profiled,
  runAsChild
} from "effect-agent-session-test-support/measure"
import type { Client, Task, TaskResult, Variant } from "./tasks.js"

const rawClient = async (bounded: boolean): Promise<Client> => {
  const raw = await import("./raw.js")
  return { ...raw, slowConsumer: (url, n, options) => raw.slowConsumer(url, n, { ...options, bounded }) }
}

const clientFor = async (variant: Variant | "raw-unbounded"): Promise<Client> => {
  if (variant === "sdk") return (await import("./sdk.js")).client
  return rawClient(variant === "raw")
}

/** Runs one task. */
export const runTask = async (task: Task): Promise<TaskResult> => {
  switch (task.kind) {
    case "throughput": {
      const client = await clientFor(task.variant)
      const run = task.variant === "sdk" && task.path === "attach"
        ? (await import("./sdk.js")).throughputAttach
        : task.variant === "raw" && task.path === "floor"
        ? (await import("./floors.js")).throughputStream
        : client.throughput
      if (task.warmup > 0) await run(task.url, task.warmup)
      fullGc()
      const label = task.variant === "sdk" && task.path === "attach"
        ? "sdk-attach"
        : task.path === "floor"
        ? "floor-stream"
        : task.variant
      return profiled(`throughput-${label}`, async () => {
        const cpu = process.cpuUsage()
        const result = await run(task.url, task.n)
        const used = process.cpuUsage(cpu)
        return { ...result, cpuMs: (used.user + used.system) / 1000 }
      })
    }
    case "memory": {
      const variant = task.variant
      let hold: Client["hold"]
      if (variant === "raw" || variant === "sdk") {
        const client = await clientFor(variant)
        hold = task.path === "start" ? client.holdStarted : client.hold
      } else {
        const floors = await import("./floors.js")
        hold = (url, count, concurrency) => floors.hold(variant, url, count, concurrency)
      }
      return profiled(`memory-${variant}${task.path === "start" ? "-start" : ""}`, () => memory(hold, task.url, task.count, task.concurrency))
    }
    case "slow": {
      const client = await clientFor(task.variant)
      // Warm up with a short run, so compiling is not counted as heap.
      await client.slowConsumer(task.url, 1000, {
        bufferSize: task.bufferSize,
        workMicros: task.workMicros,
        yieldEvery: task.yieldEvery,
        sampler: heapSampler(task.liveEvery)
      })
      return profiled(`slow-${task.variant}`, () =>
        client.slowConsumer(task.url, task.n, {
          bufferSize: task.bufferSize,
          workMicros: task.workMicros,
          yieldEvery: task.yieldEvery,
          sampler: heapSampler(task.liveEvery)
        }))
    }
    case "fibers": {
      const variant = task.variant
      return variant === "sdk"
        ? (await import("./sdk.js")).countFibers(task.url, task.count, task.concurrency)
        : (await import("./floors.js")).countFibers(variant, task.url, task.count, task.concurrency)
    }
    case "firstEvent": {
      const firstEvent = task.variant === "floor-stream"
        ? (await import("./floors.js")).firstEvent
        : (await clientFor(task.variant)).firstEvent
      return firstEvent(task.baseUrl, task.apiKey, createRequest, {
        sessions: task.sessions,
        warmup: task.warmup,
        events: task.events,
        measure: (body) => profiled(`firstEvent-${task.variant}`, body)
      })
    }
    case "reconnect":
      return (await clientFor(task.variant)).reconnect(task.url, task.id, task.k, task.drops)
    case "createSession": {
      const createSession = await import("./createSession.js")
      return profiled("createSession", () => createSession.run(task))
    }
    case "sse": {
      const sse = await import("./sse.js")
      return profiled("sse", async () => sse.run(task))
    }
  }
}

export type { HeapSample, MemoryResult }

runAsChild(import.meta.url, runTask)
