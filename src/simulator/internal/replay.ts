/**
 * The simulator's replay of a recording over real sockets (issue 23): a server that answers the
 * recorded create request with the recorded response and serves each connection a client opens
 * as the next recorded connection, over WebSocket or Server-Sent Events, in the recorded
 * dialect: its frames with their recorded delays (divided by `speed`), then its end (a close
 * code, a drop, a refusal). The client's answers are compared with the recorded ones.
 *
 * One recorded session at a time: each create (or, for a recording without one, the first
 * connection) starts a run over the file, read line by line as it goes.
 */
import type * as Http from "node:http"
import type * as NodeStream from "node:stream"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type WebSocket, WebSocketServer } from "ws"
import type * as Dialect from "../../Dialect.js"
import { AgentSessionError, InvalidRecording, type ReplayError, ReplayMismatch } from "../../Errors.js"
import { Recording as Format } from "effect-agent-session-core"
import * as Fs from "node:fs"
import * as ServiceApi from "../../ServiceApi.js"
import { CreateSessionRequest, SessionInfo } from "../../Session.js"
import * as Wire from "../../Wire.js"
import { errorResponse } from "./api.js"
import * as Body from "./body.js"
import { requestUrl, type RunFork } from "./transport.js"

/** The settings of a replay server. */
export interface ReplayServerOptions {
  readonly path: string
  readonly header: Format.Header
  readonly accountKey: string
  /** Recorded delays are divided by this (`Infinity`: none). */
  readonly speed: number
  readonly answerTimeout: Duration.Duration
  /** How long a connection the client is expected to end is held open at most. */
  readonly holdTimeout: Duration.Duration
  readonly maxLineLength?: number | undefined
  readonly runFork: RunFork
  readonly limits: Body.BodyLimits
  readonly maxClientFrameBytes: number
  /** Told of every run's end. */
  readonly onRunEnd: (exit: Exit.Exit<Report, ReplayError>) => void
}

/** What a run did. */
export interface Report {
  readonly sessionId: string
  readonly connections: number
  readonly frames: number
  readonly answers: number
}

const decodeError = Schema.decodeUnknownEither(AgentSessionError)
const decodeSession = Schema.decodeUnknownEither(SessionInfo)
const encodeRequest = Schema.encodeEither(CreateSessionRequest)

/** The longest close reason a WebSocket carries (123 bytes); ASCII kept short. */
const closeReason = (text: string): string => {
  let out = text.replace(/[^\x20-\x7e]/g, "?")
  if (out.length > 120) out = `${out.slice(0, 117)}...`
  return out
}

/** How one connection is served: the same playback over a WebSocket or an SSE response. */
interface Sink {
  /** Opens the connection (upgrade, or the SSE headers, or the message handshake); false when it cannot. */
  readonly accept: () => Effect.Effect<boolean>
  readonly refuse: (status: number, reason: string) => void
  readonly reset: () => void
  readonly send: (entry: Format.FrameEntry) => void
  readonly tooLarge: (size: number) => void
  readonly alive: () => void
  readonly close: (code: number, reason: string) => void
  readonly drop: () => void
  readonly endStream: () => void
  /** Resolves once the client went away. */
  readonly gone: Effect.Effect<void>
}

/** A run over the file: one replayed session. */
class Run {
  phase: "create" | "events" = "create"
  session: SessionInfo | undefined = undefined
  connections = 0
  frames = 0
  answers = 0
  failure: ReplayError | undefined = undefined
  finished = false
  readonly pending: Array<Format.AnswerData> = []
  waiter: (() => void) | undefined = undefined
  playing: Fiber.RuntimeFiber<void> | undefined = undefined
  sink: Sink | undefined = undefined
  constructor(readonly reader: Format.Reader, readonly result: Deferred.Deferred<Report, ReplayError>) {}
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

/** The event channels and the create route of a replay. */
export const make = (options: ReplayServerOptions) => {
  const { header, path } = options
  const dialect = header.dialect
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxClientFrameBytes, clientTracking: true })
  const sseResponses = new Set<Http.ServerResponse>()
  const runs: Array<Run> = []
  let started = 0
  let latest: Run | undefined
  /** Those waiting for a run to start (`result` before any client came). */
  const starting: Array<() => void> = []

  const delay = (ms: number): Effect.Effect<void> =>
    ms <= 0 || !Number.isFinite(options.speed) ? Effect.void : Effect.sleep(Duration.millis(ms / options.speed))

  const invalid = (line: number, reason: string) => new InvalidRecording({ path, line, reason })

  const finish = (run: Run, exit: Exit.Exit<void, ReplayError>) => {
    if (run.finished) return
    run.finished = true
    run.reader.close()
    if (Exit.isFailure(exit) && exit.cause._tag === "Fail") run.failure = exit.cause.error
    const ended = Exit.map(exit, (): Report => ({
      sessionId: header.sessionId,
      connections: run.connections,
      frames: run.frames,
      answers: run.answers
    }))
    Deferred.unsafeDone(run.result, ended)
    options.onRunEnd(ended)
  }

  const newRun = (): Run | InvalidRecording => {
    const opened = Format.Reader.open(path, Fs, options.maxLineLength ?? Format.defaultMaxLineLength)
    if (!("reader" in opened)) return invalid(opened.line, opened.reason)
    const previous = latest
    if (previous !== undefined && !previous.finished) {
      if (previous.playing !== undefined) options.runFork(Fiber.interrupt(previous.playing))
      finish(previous, Exit.fail(mismatch("create", 0, "the recorded session to end", "another create before it ended")))
    }
    const run = new Run(opened.reader, Deferred.unsafeMake(FiberId.none))
    runs.push(run)
    started += 1
    // Older runs are finished (above): only their readers are closed with the server.
    if (runs.length > 16) runs.shift()
    latest = run
    for (const wake of starting.splice(0)) wake()
    return run
  }

  const mismatch = (subject: "answer" | "create" | "connection", line: number, expected: string, actual: string, difference?: string) =>
    new ReplayMismatch({
      path,
      line,
      subject,
      expected,
      actual,
      difference: difference ?? `expected ${expected}, got ${actual}`
    })

  // ---------------------------------------------------------------------------
  // HTTP
  // ---------------------------------------------------------------------------

  const sendJson = (response: Http.ServerResponse, status: number, body: unknown) => {
    if (response.headersSent) return void response.destroy()
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
  }
  const sendError = (response: Http.ServerResponse, error: Parameters<typeof errorResponse>[0]) => {
    const { body, status } = errorResponse(error)
    if (response.headersSent) return void response.destroy()
    response.writeHead(status, { "content-type": "application/json" }).end(body)
  }

  const authorized = (request: Http.IncomingMessage): boolean => {
    if (dialect.auth === "x-api-key") return request.headers["x-api-key"] === options.accountKey
    return request.headers.authorization === `Bearer ${options.accountKey}`
  }

  const sessionJson = (session: SessionInfo): unknown => {
    const encoded = Schema.encodeEither(ServiceApi.sessionResponse(dialect))(session)
    return Either.getOrElse(encoded, () => ({ session_id: session.session_id }))
  }

  /** Answers a create request with the recorded response (or error). */
  const create = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    if (!authorized(request)) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    Body.readBody(request, options.limits, (body) => {
      if (body._tag === "Aborted") return void response.destroy()
      if (body._tag !== "Ok") return sendError(response, new ServiceApi.ApiBadRequest({ error: `the body was refused (${body._tag})` }))
      let json: unknown
      try {
        json = JSON.parse(body.text)
      } catch {
        return sendError(response, new ServiceApi.ApiBadRequest({ error: "the body is not JSON" }))
      }
      const decoded = Schema.decodeUnknownEither(ServiceApi.createSessionBody(dialect))(json)
      if (Either.isLeft(decoded)) return sendError(response, new ServiceApi.ApiBadRequest({ error: "the body is not a create request" }))
      const run = latest !== undefined && !latest.finished && latest.phase === "create" ? latest : newRun()
      if (run instanceof InvalidRecording) return sendError(response, new ServiceApi.ApiServerError({ error: run.message }))
      const first = run.reader.take()
      if (first._tag !== "Entry" || first.entry.type !== "create") {
        const failure = first._tag === "Invalid"
          ? invalid(first.line, first.reason)
          : mismatch("create", first.line, "an attach (the recording has no create)", "a create request")
        finish(run, Exit.fail(failure))
        return sendError(response, new ServiceApi.ApiNotFound({ error: `replay: ${failure.message}` }))
      }
      const actual = Either.getOrElse(encodeRequest(decoded.right), () => ({}))
      const difference = Format.difference(first.entry.request, actual)
      if (difference.length > 0) {
        const failure = mismatch("create", first.line, JSON.stringify(first.entry.request), JSON.stringify(actual), difference)
        finish(run, Exit.fail(failure))
        return sendError(response, new ServiceApi.ApiBadRequest({ error: `replay: ${failure.message}` }))
      }
      const result = run.reader.take()
      if (result._tag === "Entry" && result.entry.type === "created") {
        const session = decodeSession(result.entry.session)
        if (Either.isLeft(session)) {
          finish(run, Exit.fail(invalid(result.line, "created: the session is not valid")))
          return sendError(response, new ServiceApi.ApiServerError({ error: "replay: the recorded session is not valid" }))
        }
        run.phase = "events"
        run.session = session.right
        return sendJson(response, 200, sessionJson(session.right))
      }
      if (result._tag === "Entry" && result.entry.type === "create-failed") {
        const error = decodeError(result.entry.error)
        const status = Either.isRight(error) && "status" in error.right && typeof error.right.status === "number"
          ? error.right.status
          : undefined
        if (Either.isRight(error) && error.right._tag === "TransportError") return void response.destroy()
        if (status === undefined) return sendError(response, new ServiceApi.ApiServerError({ error: "replay: the create failed" }))
        const text = Either.isRight(error) && "body" in error.right && typeof error.right.body === "string" ? error.right.body : "{}"
        response.writeHead(status, { "content-type": "application/json" }).end(text)
        return
      }
      const failure = result._tag === "Invalid"
        ? invalid(result.line, result.reason)
        : invalid(result.line, "a create line without its result")
      finish(run, Exit.fail(failure))
      return sendError(response, new ServiceApi.ApiServerError({ error: `replay: ${failure.message}` }))
    })
  }

  // ---------------------------------------------------------------------------
  // Answers
  // ---------------------------------------------------------------------------

  const answered = (data: Format.AnswerData) => {
    const run = latest
    if (run === undefined || run.finished) return
    if (run.pending.length >= 64) return
    run.pending.push(data)
    run.waiter?.()
  }

  const nextAnswer = (run: Run): Effect.Effect<Format.AnswerData> =>
    Effect.async<Format.AnswerData>((resume) => {
      const take = () => {
        const data = run.pending.shift()
        if (data === undefined) return false
        run.waiter = undefined
        resume(Effect.succeed(data))
        return true
      }
      if (take()) return
      run.waiter = () => void take()
      return Effect.sync(() => {
        run.waiter = undefined
      })
    })

  // ---------------------------------------------------------------------------
  // Playback
  // ---------------------------------------------------------------------------

  /** Plays the run's next recorded connection on a sink. */
  const play = (run: Run, sink: Sink): Effect.Effect<void> =>
    Effect.gen(function*() {
      let connect: Format.Numbered | undefined
      while (connect === undefined) {
        const next = run.reader.take()
        if (next._tag === "Invalid") {
          finish(run, Exit.fail(invalid(next.line, next.reason)))
          return sink.refuse(500, `replay: ${next.reason}`)
        }
        if (next._tag === "Done" || next.entry.type === "end") {
          finish(run, Exit.void)
          return sink.refuse(410, "replay: the recording has no more connections")
        }
        if (next.entry.type === "connect") connect = next
      }
      run.connections += 1
      let at = connect.entry.t
      let opened = false
      while (true) {
        const next = run.reader.take()
        if (next._tag === "Invalid") {
          finish(run, Exit.fail(invalid(next.line, next.reason)))
          return opened ? sink.close(1011, "replay: the recording is not valid") : sink.refuse(500, "replay: the recording is not valid")
        }
        if (next._tag === "Done") {
          finish(run, Exit.fail(invalid(next.line, "the recording ends before its connection closed")))
          return opened ? sink.close(1011, "replay: the recording ends here") : sink.reset()
        }
        const { entry, line } = next
        yield* delay(entry.t - at)
        at = Math.max(at, entry.t)
        switch (entry.type) {
          case "open":
            if (!(yield* sink.accept())) return
            opened = true
            break
          case "frame":
            run.frames += 1
            sink.send(entry)
            break
          case "too-large":
            sink.tooLarge(entry.size)
            break
          case "alive":
            sink.alive()
            break
          case "answer": {
            const given = yield* Effect.timeoutTo(nextAnswer(run), {
              duration: options.answerTimeout,
              onSuccess: Option.some,
              onTimeout: Option.none
            })
            const expected = JSON.stringify(entry.data)
            const failure = Option.match(given, {
              onNone: () =>
                mismatch(
                  "answer",
                  line,
                  expected,
                  `no answer within ${Duration.format(options.answerTimeout)}`
                ),
              onSome: (data) => {
                const difference = Format.difference(entry.data, data)
                return difference.length === 0 ? undefined : mismatch("answer", line, expected, JSON.stringify(data), difference)
              }
            })
            if (failure !== undefined) {
              finish(run, Exit.fail(failure))
              return sink.close(1008, `replay: ${failure.message}`)
            }
            run.answers += 1
            break
          }
          case "close":
            return yield* end(run, sink, entry)
          default:
            finish(run, Exit.fail(invalid(line, `a ${entry.type} line before connection ${connect.entry.type === "connect" ? connect.entry.conn : 0} closed`)))
            return sink.drop()
        }
      }
    })

  /** Ends a connection as the recorded one ended; the run ends after the last one. */
  const end = (run: Run, sink: Sink, close: Format.CloseEntry): Effect.Effect<void> =>
    Effect.gen(function*() {
      const last = run.reader.peek()
      if (last._tag === "Done" || (last._tag === "Entry" && last.entry.type === "end")) finish(run, Exit.void)
      const how = Format.serverEndOf(close)
      const hold = Effect.timeout(sink.gone, options.holdTimeout).pipe(Effect.ignore)
      switch (how._tag) {
        case "Refuse":
          return sink.refuse(how.status, how.reason)
        case "Reset":
          return sink.reset()
        case "Hang":
          yield* hold
          return sink.reset()
        case "Close":
          return sink.close(how.code, how.reason)
        case "Drop":
          return sink.drop()
        case "EndStream":
          return sink.endStream()
        case "TooLarge":
          sink.tooLarge(how.size)
          yield* hold
          return sink.drop()
        case "AwaitClient":
          yield* hold
          return sink.drop()
      }
    })

  /** Starts the playback of a new connection, superseding one still playing. */
  const serve = (sink: Sink) => {
    const run = latest === undefined ? attachRun() : latest
    if (run === undefined) return sink.refuse(404, "replay: create the recorded session first")
    if (run instanceof InvalidRecording) return sink.refuse(500, `replay: ${run.message}`)
    if (run.finished) {
      // 410: the client stops (HandshakeRejected), with why in the reason.
      return sink.refuse(
        410,
        run.failure === undefined ? "replay: the recorded session has ended" : `replay: ${run.failure.message}`
      )
    }
    if (run.phase !== "events") return sink.refuse(404, "replay: create the recorded session first")
    const previous = run.playing
    const previousSink = run.sink
    run.sink = sink
    run.playing = options.runFork(
      Effect.zipRight(
        previous === undefined ? Effect.void : Fiber.interrupt(previous),
        Effect.zipRight(
          // A newer connection supersedes the one still playing, which is closed (4000).
          Effect.sync(() => previousSink?.close(4000, "superseded by a newer connection")),
          Effect.raceFirst(play(run, sink), sink.gone)
        )
      )
    )
  }

  /** A run for a recording without a create (of `attach`): it starts at the first connection. */
  const attachRun = (): Run | InvalidRecording | undefined => {
    const first = Format.Reader.open(path, Fs, options.maxLineLength ?? Format.defaultMaxLineLength)
    if (!("reader" in first)) return invalid(first.line, first.reason)
    const next = first.reader.peek()
    first.reader.close()
    if (next._tag === "Entry" && next.entry.type === "create") return undefined
    const run = newRun()
    if (run instanceof InvalidRecording) return run
    run.phase = "events"
    return run
  }

  // ---------------------------------------------------------------------------
  // WebSocket
  // ---------------------------------------------------------------------------

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

  /** The message handshake: the first text frame is `{ apiKey, sessionId }` (within 5 s). */
  const awaitHandshake = (ws: WebSocket, accepted: () => void): void => {
    const timer = setTimeout(() => ws.close(1008, "handshake timeout"), 5_000)
    ws.once("close", () => clearTimeout(timer))
    ws.once("message", (data) => {
      clearTimeout(timer)
      const frame = Wire.decodeClientFrame(String(data), { maxFrameSize: options.maxClientFrameBytes })
      if (Either.isLeft(frame) || frame.right._tag !== "Handshake") {
        return ws.close(1008, "expected the handshake {apiKey, sessionId}")
      }
      if (frame.right.apiKey !== options.accountKey) return ws.close(1008, "invalid API key")
      if (frame.right.sessionId !== header.sessionId) return ws.close(1008, "no such session")
      accepted()
    })
  }

  const refuseUpgrade = (socket: NodeStream.Duplex, error: Parameters<typeof errorResponse>[0]) => {
    const { body, status } = errorResponse(error)
    if (!socket.writable) return void socket.destroy()
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${
        Buffer.byteLength(body)
      }\r\nConnection: close\r\n\r\n${body}`
    )
  }

  const onUpgrade = (request: Http.IncomingMessage, socket: NodeStream.Duplex, head: Buffer): void => {
    socket.on("error", () => socket.destroy())
    const url = requestUrl(request)
    if (url === undefined || url.pathname !== dialect.connectPath) {
      return refuseUpgrade(socket, new ServiceApi.ApiNotFound({ error: "no such route" }))
    }
    const sessionId = url.searchParams.get("sessionId")
    const apiKey = url.searchParams.get("apiKey")
    const byQuery = dialect.handshake === "query" || (dialect.handshake === "both" && sessionId !== null && apiKey !== null)
    if (!byQuery) {
      // Authenticated by its first message before it is given a recorded connection.
      return wss.handleUpgrade(request, socket, head, (ws) => {
        ws.on("error", () => ws.terminate())
        awaitHandshake(ws, () => serve(wsSink(socket, ws)))
      })
    }
    if (apiKey !== options.accountKey) return refuseUpgrade(socket, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return refuseUpgrade(socket, new ServiceApi.ApiNotFound({ error: "no such session" }))
    serve(wsSink(
      socket,
      Effect.async<WebSocket>((resume) => wss.handleUpgrade(request, socket, head, (ws) => resume(Effect.succeed(ws))))
    ))
  }

  // ---------------------------------------------------------------------------
  // Server-Sent Events
  // ---------------------------------------------------------------------------

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

  const queryOf = (request: Http.IncomingMessage) => {
    const url = requestUrl(request)
    return { apiKey: url?.searchParams.get("apiKey") ?? "", sessionId: url?.searchParams.get("sessionId") ?? "" }
  }

  const sseConnect = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const { apiKey, sessionId } = queryOf(request)
    if (apiKey !== options.accountKey) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
    serve(sseSink(response))
  }

  const sseEgress = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const { apiKey, sessionId } = queryOf(request)
    if (apiKey !== options.accountKey) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
    if (sessionId !== header.sessionId) return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
    Body.readBody(request, options.limits, (body) => {
      if (body._tag === "Aborted") return void response.destroy()
      const frame = body._tag === "Ok" ? Wire.decodeClientFrame(body.text, { maxFrameSize: options.maxClientFrameBytes }) : undefined
      if (frame === undefined || Either.isLeft(frame) || frame.right._tag !== "Answer") {
        return sendError(response, new ServiceApi.ApiBadRequest({ error: "expected { event: \"external_resource_granted\", data }" }))
      }
      answered(frame.right.data)
      sendJson(response, 202, { accepted: true })
    })
  }

  // ---------------------------------------------------------------------------
  // Routes
  // ---------------------------------------------------------------------------

  const onRequest = (request: Http.IncomingMessage, response: Http.ServerResponse): void => {
    const url = requestUrl(request)
    if (url === undefined) return sendError(response, new ServiceApi.ApiBadRequest({ error: "the request target is not a valid URL" }))
    const route = url.pathname
    if (request.method === "POST" && route === dialect.sessionsPath) return create(request, response)
    if (request.method === "GET" && route === dialect.sse.connectPath) return sseConnect(request, response)
    if (request.method === "POST" && route === dialect.sse.egressPath) return sseEgress(request, response)
    if (request.method === "GET" && dialect.retrieve && route.startsWith(`${dialect.sessionsPath}/`)) {
      if (!authorized(request)) return sendError(response, new ServiceApi.ApiUnauthorized({ error: "invalid API key" }))
      const session = latest?.session
      if (session === undefined || route !== `${dialect.sessionsPath}/${session.session_id}`) {
        return sendError(response, new ServiceApi.ApiNotFound({ error: "no such session" }))
      }
      return sendJson(response, 200, sessionJson(session))
    }
    return sendError(response, new ServiceApi.ApiNotFound({ error: "the replay serves one recorded session: no such route" }))
  }

  /** The latest run's result, once it ends (waiting for one to start). */
  const result: Effect.Effect<Report, ReplayError> = Effect.suspend(() => {
    const run = latest
    if (run !== undefined) return Deferred.await(run.result)
    return Effect.zipRight(
      Effect.async<void>((resume) => {
        const wake = () => resume(Effect.void)
        starting.push(wake)
        return Effect.sync(() => {
          const at = starting.indexOf(wake)
          if (at >= 0) starting.splice(at, 1)
        })
      }),
      Effect.suspend(() => (latest === undefined ? Effect.never : Deferred.await(latest.result)))
    )
  })

  const close = Effect.async<void>((resume) => {
    for (const run of runs) run.reader.close()
    for (const ws of wss.clients) ws.terminate()
    for (const response of sseResponses) response.destroy()
    sseResponses.clear()
    wss.close(() => resume(Effect.void))
  })

  return {
    onRequest,
    onUpgrade,
    result,
    runs: Effect.sync(() => started),
    close
  } as const
}
