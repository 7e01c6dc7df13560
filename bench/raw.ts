/**
 * The raw floor: a hand-written `ws` client doing `JSON.parse` only, no types, no typed errors,
 * no reconnect schedule. Each function is one measurement, run inside a measured child process.
 */
import { randomUUID } from "node:crypto"
import { type RawData, WebSocket } from "ws"
import { droppedAt, frameIndex, Scenario, sharedNow } from "effect-agent-session-test-support/frames"
import {
  busy,
  connectUrl,
  createRequest,
  type FirstEventResult,
  type FirstEventOptions,
  firstEventLoop,
  type HeapSampler,
  type HoldResult,
  pool,
  type ReconnectResult,
  type SlowResult,
  type ThroughputResult,
  yieldToIo
} from "effect-agent-session-test-support/measure"

interface Frame {
  readonly event?: string
  readonly data?: { readonly content?: string }
}

const parse = (data: RawData): Frame => JSON.parse(String(data)) as Frame

/** Reads a `tp-<n>` stream to its `complete`; the time runs from opening the socket to the last frame parsed. */
export const throughput = (url: string, n: number): Promise<ThroughputResult> =>
  new Promise((resolve, reject) => {
    const sessionId = `${Scenario.throughput}-${n}`
    const start = performance.now()
    const ws = new WebSocket(connectUrl(url))
    let frames = 0
    let lastIndex = -1
    let end = Number.NaN
    ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId })))
    ws.on("message", (data) => {
      const frame = parse(data)
      if (frame.event === "complete") {
        end = performance.now()
      } else {
        frames++
        if (frames === n) lastIndex = frameIndex(frame.data?.content ?? "")
      }
    })
    ws.on("error", reject)
    ws.on("close", () => resolve({ frames, ms: end - start, lastIndex }))
  })

/** Opens `count` connections (`concurrency` opening at a time); resolves once each got its first frame. */
export const hold = async (url: string, count: number, concurrency: number): Promise<HoldResult> => {
  const sockets: Array<WebSocket> = []
  const start = performance.now()
  await pool(count, concurrency, (i) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(connectUrl(url))
      sockets.push(ws)
      ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.hold}-${i}` })))
      ws.once("message", (data) => {
        parse(data)
        resolve()
      })
      ws.on("error", reject)
    }))
  const openMs = performance.now() - start
  return {
    opened: sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length,
    openMs,
    close: async () => {
      await Promise.all(sockets.map((ws) =>
        new Promise<void>((resolve) => {
          ws.on("close", () => resolve())
          ws.terminate()
        })
      ))
    }
  }
}

/**
 * Opens `count` sessions as a client of the service does, create then connect (`concurrency` at a
 * time): per session a bare `fetch` POST of the create request to the load generator (which
 * answers a `hold` session), the JSON parsed, then a `ws` socket, the handshake, the first frame
 * parsed. Resolves once each got its first frame.
 */
export const holdStarted = async (url: string, count: number, concurrency: number): Promise<HoldResult> => {
  const createUrl = `${url.replace(/^ws/, "http")}/api/v1sessions`
  const body = JSON.stringify(createRequest)
  const sockets: Array<WebSocket> = []
  const start = performance.now()
  await pool(count, concurrency, async () => {
    const response = await fetch(createUrl, {
      method: "POST",
      headers: { authorization: "Bearer bench-key", "content-type": "application/json", "idempotency-key": randomUUID() },
      body
    })
    if (response.status !== 200 && response.status !== 201) throw new Error(`create: HTTP ${response.status}`)
    const sessionId = ((await response.json()) as { readonly session_id?: string }).session_id ?? ""
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(connectUrl(url))
      sockets.push(ws)
      ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId })))
      ws.once("message", (data) => {
        parse(data)
        resolve()
      })
      ws.on("error", reject)
    })
  })
  const openMs = performance.now() - start
  return {
    opened: sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length,
    openMs,
    close: async () => {
      await Promise.all(sockets.map((ws) =>
        new Promise<void>((resolve) => {
          ws.on("close", () => resolve())
          ws.terminate()
        })
      ))
    }
  }
}

/**
 * A slow consumer (`workMicros` of CPU per event, I/O let in every `yieldEvery` events) behind a queue. `bounded`: the socket
 * is paused while the queue holds `bufferSize` frames (a careful hand-written client);
 * otherwise the queue grows without bound (a naive one).
 */
export const slowConsumer = (
  url: string,
  n: number,
  options: {
    readonly bounded: boolean
    readonly bufferSize: number
    readonly workMicros: number
    readonly yieldEvery: number
    readonly sampler: HeapSampler
  }
): Promise<SlowResult> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(connectUrl(url))
    const queue: Array<Frame> = []
    let head = 0
    let done = false
    let wake: (() => void) | undefined
    let frames = 0
    let maxQueued = 0
    const start = performance.now()
    ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId: `${Scenario.throughput}-${n}` })))
    ws.on("message", (data) => {
      queue.push(parse(data))
      const queued = queue.length - head
      if (queued > maxQueued) maxQueued = queued
      if (options.bounded && queued >= options.bufferSize && !ws.isPaused) ws.pause()
      wake?.()
    })
    ws.on("error", reject)
    ws.on("close", () => {
      done = true
      wake?.()
    })
    const consume = async (): Promise<void> => {
      for (;;) {
        if (head === queue.length) {
          if (done) break
          await new Promise<void>((resolve) => {
            wake = resolve
          })
          wake = undefined
          continue
        }
        const frame = queue[head]
        queue[head++] = {}
        if (head > 4096 && head * 2 > queue.length) {
          queue.splice(0, head)
          head = 0
        }
        if (options.bounded && ws.isPaused && queue.length - head <= options.bufferSize / 2) ws.resume()
        if (frame?.event === "complete") continue
        busy(options.workMicros)
        frames++
        options.sampler.tick(frames)
        if (frames % options.yieldEvery === 0) await yieldToIo()
      }
    }
    consume().then(
      () => resolve({ frames, ms: performance.now() - start, maxQueued, ...options.sampler.result() }),
      reject
    )
  })

/**
 * The reconnect floor: on an abrupt close the client reconnects at once (no schedule), so the
 * figure is what opening a socket and the handshake cost.
 */
export const reconnect = (url: string, id: string, k: number, drops: number): Promise<ReconnectResult> =>
  new Promise((resolve, reject) => {
    const sessionId = `${Scenario.drop}-${id}-${k}-${drops}`
    const gaps: Array<number> = []
    let frames = 0
    const open = (): void => {
      const ws = new WebSocket(connectUrl(url))
      ws.on("open", () => ws.send(JSON.stringify({ apiKey: "bench-key", sessionId })))
      ws.on("message", (data) => {
        const frame = parse(data)
        if (frame.event === "complete") return
        frames++
        const at = droppedAt(frame.data?.content ?? "")
        if (!Number.isNaN(at)) gaps.push(sharedNow() - at)
      })
      ws.on("error", () => undefined)
      ws.on("close", (code) => {
        if (code === 1000) resolve({ frames, gapsMs: gaps })
        else if (gaps.length > drops) reject(new Error("too many reconnects"))
        else open()
      })
    }
    open()
  })

/**
 * Create to first event, the floor: per session a bare `fetch` POST of the create request (the
 * body and Bearer key the SDK sends, and an `Idempotency-Key` like the SDK's), the JSON parsed,
 * then a `ws` socket to the documented connect path, the `{apiKey, sessionId}` handshake as the
 * first message, and `JSON.parse` of each frame; after `events` frames the client closes (1000)
 * and waits for the close. The latency runs from the POST to the first frame parsed.
 */
export const firstEvent = async (
  baseUrl: string,
  apiKey: string,
  request: typeof createRequest,
  options: FirstEventOptions
): Promise<FirstEventResult> => {
  const createUrl = `${baseUrl}/api/v1sessions`
  const wsUrl = connectUrl(baseUrl.replace(/^http/, "ws"))
  const body = JSON.stringify(request)
  const once = async (): Promise<{ readonly firstMs: number; readonly seen: number }> => {
    const start = performance.now()
    const response = await fetch(createUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": randomUUID() },
      body
    })
    if (response.status !== 200 && response.status !== 201) throw new Error(`create: HTTP ${response.status}`)
    const session = (await response.json()) as { readonly session_id?: string }
    const sessionId = session.session_id ?? ""
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl)
      let first = Number.NaN
      let seen = 0
      ws.on("open", () => ws.send(JSON.stringify({ apiKey, sessionId })))
      ws.on("message", (data) => {
        parse(data)
        if (seen++ === 0) first = performance.now()
        if (seen === options.events) ws.close(1000)
      })
      ws.on("error", reject)
      ws.on("close", () => resolve({ firstMs: first - start, seen: Math.min(seen, options.events) }))
    })
  }
  return firstEventLoop(once, options)
}
