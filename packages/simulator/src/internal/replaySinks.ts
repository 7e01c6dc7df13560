/**
 * How a replay serves one connection (see `replay.ts`): the same playback written to a WebSocket
 * (upgraded or not yet) or to a Server-Sent Events response, each end waiting for the writes before
 * it to be flushed.
 */
import { Recording as Format } from "effect-agent-session-core"
import type * as Http from "node:http"
import type * as NodeStream from "node:stream"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type { WebSocket } from "ws"
import type * as Dialect from "effect-agent-session/Dialect"
import * as Wire from "effect-agent-session/Wire"
import { sendJson } from "./replayHttp.js"
import type { ReplayServerOptions, Runs, Sink } from "./replayRuns.js"

/** The longest close reason a WebSocket carries (123 bytes); ASCII kept short. */
const closeReason = (text: string): string => {
  let out = text.replace(/[^\x20-\x7e]/g, "?")
  if (out.length > 120) out = `${out.slice(0, 117)}...`
  return out
}

/**
 * The writes of a connection not flushed yet: an end (a drop, a close) waits for them, as the
 * recorded end came after the frames were received (at most 2 s: a client that stopped reading
 * is dropped anyway).
 */
class Flushing {
  private pending = 0
  private readonly waiters: Array<() => void> = []
  /** Counts a write; the callback to give it. */
  write(): (error?: Error | null) => void {
    this.pending += 1
    return () => {
      this.pending -= 1
      if (this.pending === 0) for (const waiter of this.waiters.splice(0)) waiter()
    }
  }
  /** Runs `f` once every write so far is flushed. */
  then(f: () => void): void {
    if (this.pending === 0) return f()
    let done = false
    const once = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      f()
    }
    const timer = setTimeout(once, 2_000)
    this.waiters.push(once)
  }
}

const padFrame = (framing: Dialect.Framing, size: number): string => {
  const frame = (thought: string) =>
    Wire.encodeEvent(framing, { _tag: "ThoughtsAndMemories", thought, memory: "" })
  const empty = frame("").length
  return frame("x".repeat(Math.max(0, size - empty)))
}

/**
 * The sinks of a replay: answers a client sends on a WebSocket go to the runs; the open SSE
 * responses are kept in `sseResponses` (closed with the server).
 */
export const makeSinks = (options: ReplayServerOptions, runs: Runs, sseResponses: Set<Http.ServerResponse>) => {
  const dialect = options.header.dialect
  const { answered } = runs

  /**
   * A WebSocket connection: not upgraded yet (the query handshake, checked before the upgrade),
   * or already open and authenticated by its first message (the message handshake).
   */
  const wsSink = (socket: NodeStream.Duplex, upgrade: Effect.Effect<WebSocket> | WebSocket): Sink => {
    let ws: WebSocket | undefined
    let goneNow = false
    const flushing = new Flushing()
    const goneSignal = Deferred.unsafeMake<void>(FiberId.none)
    const markGone = () => {
      goneNow = true
      Deferred.unsafeDone(goneSignal, Exit.void)
    }
    socket.once("close", markGone)
    const listen = (open: WebSocket) => {
      ws = open
      open.on("error", () => open.terminate())
      open.once("close", markGone)
      open.on("message", (data) => {
        const frame = Wire.decodeClientFrame(String(data), { maxFrameSize: options.maxClientFrameBytes })
        if (Either.isRight(frame) && frame.right._tag === "Answer") answered(frame.right.data)
      })
    }
    if (!Effect.isEffect(upgrade)) listen(upgrade)
    return {
      accept: () =>
        Effect.suspend(() => {
          if (goneNow || ws !== undefined || !Effect.isEffect(upgrade)) return Effect.succeed(ws !== undefined && !goneNow)
          return Effect.map(upgrade, (open) => {
            listen(open)
            return true
          })
        }),
      // Already open (the message handshake): a refusal recorded at the upgrade is a close.
      refuse: (status, reason) => {
        if (ws !== undefined) return ws.close(status === 401 || status === 403 || status === 410 ? 1008 : 1011, closeReason(reason))
        const body = JSON.stringify({ _tag: "Replay", error: reason })
        if (!socket.writable) return void socket.destroy()
        socket.end(
          `HTTP/1.1 ${status} Replay\r\nContent-Type: application/json\r\nContent-Length: ${
            Buffer.byteLength(body)
          }\r\nConnection: close\r\n\r\n${body}`
        )
      },
      reset: () => (ws === undefined ? socket.destroy() : ws.terminate()),
      send: (entry) => {
        if (ws === undefined || ws.readyState !== ws.OPEN) return
        if ("text" in entry) ws.send(entry.text, flushing.write())
        else if ("base64" in entry) ws.send(Buffer.from(entry.base64, "base64"), flushing.write())
        else ws.send(Format.eventToFrame(dialect.framing, entry.event, entry.data), flushing.write())
      },
      tooLarge: (size) => {
        if (ws !== undefined && ws.readyState === ws.OPEN) ws.send(padFrame(dialect.framing, size), flushing.write())
      },
      alive: () => {},
      close: (code, reason) =>
        flushing.then(() => {
          if (ws === undefined) return void socket.destroy()
          if (code === 1005) return ws.close()
          ws.close(code, closeReason(reason))
        }),
      drop: () => flushing.then(() => (ws === undefined ? socket.destroy() : ws.terminate())),
      endStream: () => flushing.then(() => (ws === undefined ? socket.destroy() : ws.close(1000))),
      gone: Deferred.await(goneSignal)
    }
  }

  const sseEvent = (event: string, data: string): string =>
    `event: ${event}\n${data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join("\n")}\n\n`

  const sseSink = (response: Http.ServerResponse): Sink => {
    let opened = false
    const flushing = new Flushing()
    const goneSignal = Deferred.unsafeMake<void>(FiberId.none)
    response.once("close", () => {
      sseResponses.delete(response)
      Deferred.unsafeDone(goneSignal, Exit.void)
    })
    const write = (text: string) => {
      if (opened && !response.destroyed && !response.writableEnded) response.write(text, flushing.write())
    }
    return {
      accept: () =>
        Effect.sync(() => {
          if (response.destroyed) return false
          response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
          response.flushHeaders()
          sseResponses.add(response)
          opened = true
          return true
        }),
      refuse: (status, reason) => {
        if (opened) return void response.end()
        sendJson(response, status, { _tag: "Replay", error: reason })
      },
      reset: () => void response.destroy(),
      send: (entry) => {
        if ("event" in entry) return write(sseEvent(entry.event, entry.data))
        const text = "text" in entry ? entry.text : Buffer.from(entry.base64, "base64").toString("utf8")
        const event = Format.frameToEvent(dialect.framing, text)
        write(event === undefined ? sseEvent("message", text) : sseEvent(event.event, event.data))
      },
      tooLarge: (size) => write(sseEvent("thoughts_and_memories", "x".repeat(size))),
      alive: () => write(":\n\n"),
      close: () => flushing.then(() => (opened ? void response.end() : void response.destroy())),
      drop: () => flushing.then(() => void response.destroy()),
      endStream: () => flushing.then(() => void response.end()),
      gone: Deferred.await(goneSignal)
    }
  }

  return { wsSink, sseSink } as const
}
