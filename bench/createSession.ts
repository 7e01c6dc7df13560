/**
 * Create-session overhead: `AgentApi.createSession` (over the SDK's Node HTTP client, undici)
 * against a bare `fetch` of the same request, to the simulator, in one client process, rounds
 * alternating fetch, SDK, fetch, SDK.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as AgentApi from "../src/AgentApi.js"
import * as Credentials from "../src/Credentials.js"
import * as Dialect from "../src/Dialect.js"
import type { CreateSessionResult, Task } from "./child.js"
import { stats } from "./measure.js"

/** The request both sides send. */
export const request = { start_url: "https://example.com/start", max_actions: 5, goal: "Find the pricing page" }

/** Runs the create-session comparison. */
export const run = async (task: Extract<Task, { kind: "createSession" }>): Promise<CreateSessionResult> => {
  const apiKey = task.apiKey
  const runtime = ManagedRuntime.make(
    AgentApi.layer({ baseUrl: task.baseUrl }).pipe(
      Layer.provide(Credentials.layer({ apiKey })),
      Layer.provide(NodeHttpClient.layerUndici)
    )
  )
  const api = await runtime.runPromise(AgentApi.AgentApi)
  const sdkOnce = () => runtime.runPromise(api.createSession(request))

  const url = `${task.baseUrl}${Dialect.documented.sessionsPath}`
  const body = JSON.stringify(request)
  const fetchOnce = async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body
    })
    if (response.status !== 200 && response.status !== 201) throw new Error(`fetch: HTTP ${response.status}`)
    return (await response.json()) as unknown
  }

  const round = async (once: () => Promise<unknown>, requests: number): Promise<number> => {
    const latencies: Array<number> = []
    for (let i = 0; i < requests; i++) {
      const start = performance.now()
      await once()
      latencies.push(performance.now() - start)
    }
    return stats(latencies).median
  }

  await round(fetchOnce, task.warmup)
  await round(sdkOnce, task.warmup)
  const fetchMedianMs: Array<number> = []
  const sdkMedianMs: Array<number> = []
  for (let r = 0; r < task.rounds; r++) {
    fetchMedianMs.push(await round(fetchOnce, task.requests))
    sdkMedianMs.push(await round(sdkOnce, task.requests))
  }
  await runtime.dispose()
  return { fetchMedianMs, sdkMedianMs }
}
