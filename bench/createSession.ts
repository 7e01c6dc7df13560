/**
 * Create-session overhead: `AgentApi.createSession` (over the SDK's Node HTTP client, undici)
 * against a bare `fetch` of the same request, to the simulator, in one client process, the two
 * alternating request by request.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { randomUUID } from "node:crypto"
import { AgentApi, Credentials, Dialect } from "effect-agent-session"
import type { CreateSessionResult, Task } from "./tasks.js"
import { createRequest, stats } from "effect-agent-session-test-support/measure"

/** The request both sides send. */
export const request = createRequest

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
      // The SDK sends an Idempotency-Key on every create (the simulator then keeps a digest of
      // the body): the same header here, so both sides ask the server for the same work.
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": randomUUID() },
      body
    })
    if (response.status !== 200 && response.status !== 201) throw new Error(`fetch: HTTP ${response.status}`)
    return (await response.json()) as unknown
  }

  // One round: `requests` pairs, fetch and SDK alternating request by request (the first of a
  // pair alternating too), so drift in the simulator or the machine hits both sides alike.
  const round = async (pairs: number): Promise<{ readonly fetch: number; readonly sdk: number }> => {
    const fetchLatencies: Array<number> = []
    const sdkLatencies: Array<number> = []
    const time = async (once: () => Promise<unknown>, into: Array<number>) => {
      const start = performance.now()
      await once()
      into.push(performance.now() - start)
    }
    for (let i = 0; i < pairs; i++) {
      if (i % 2 === 0) {
        await time(fetchOnce, fetchLatencies)
        await time(sdkOnce, sdkLatencies)
      } else {
        await time(sdkOnce, sdkLatencies)
        await time(fetchOnce, fetchLatencies)
      }
    }
    return { fetch: stats(fetchLatencies).median, sdk: stats(sdkLatencies).median }
  }

  await round(task.warmup)
  const fetchMedianMs: Array<number> = []
  const sdkMedianMs: Array<number> = []
  for (let r = 0; r < task.rounds; r++) {
    const result = await round(task.requests)
    fetchMedianMs.push(result.fetch)
    sdkMedianMs.push(result.sdk)
  }
  await runtime.dispose()
  return { fetchMedianMs, sdkMedianMs }
}
