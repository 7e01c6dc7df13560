/**
 * A connection's options (packages/shell/src/ConnectionSettings.ts) without an edition:
 * durations as plain milliseconds, schedules as names. The defaults; a connection's own options
 * over the layer's over the dialect's over the defaults; counts as `positiveInt`s; the pending
 * requests the connection's own only; and the core `Connection`'s options made from them.
 */
import { describe, expect, it } from "vitest"
import { Connection, Frame, Ledger } from "effect-agent-session-core"
import { ConnectionSettings, type ConnectionShell } from "../src/index.js"

const edition: ConnectionSettings.Edition<number, number, string> = {
  duration: (given, defaultMillis) => given ?? defaultMillis,
  reconnect: "default-reconnect",
  firstConnect: "default-first-connect"
}

const request: ConnectionShell.Request = {
  _tag: "ExternalResourceRequested",
  action_session_id: "a",
  resource_type: "request_user_input"
}

describe("ConnectionSettings.resolve", () => {
  it("the defaults", () => {
    expect(ConnectionSettings.resolve(edition, {}, {})).toEqual({
      reconnect: "default-reconnect",
      firstConnect: "default-first-connect",
      idleTimeout: Connection.defaults.idleTimeoutMillis,
      connectTimeout: Connection.defaults.connectTimeoutMillis,
      answerTimeout: Connection.defaults.answerTimeoutMillis,
      bufferSize: Connection.defaults.bufferSize,
      answerBufferSize: Connection.defaults.answerBufferSize,
      maxFrameSize: Frame.defaultMaxFrameSize,
      pendingRequests: [],
      strict: false,
      endOnError: false,
      failOnFrameError: true,
      dropReplays: false,
      replayHold: Connection.defaults.replayHoldMillis,
      resumes: false
    })
  })

  it("a connection's own options over the layer's, over the dialect's", () => {
    const layer = {
      reconnect: "layer",
      idleTimeout: 5,
      connectTimeout: 6,
      bufferSize: 7,
      strict: true,
      failOnFrameError: false,
      replaysOnReconnect: false,
      replayHold: 8
    }
    const settings = ConnectionSettings.resolve(edition, layer, {
      reconnect: "own",
      firstConnect: "own-first",
      idleTimeout: 50,
      bufferSize: 70,
      endOnError: true,
      resumes: true,
      pendingRequests: [request]
    }, { replaysOnReconnect: true })
    expect(settings).toMatchObject({
      reconnect: "own",
      firstConnect: "own-first",
      idleTimeout: 50,
      connectTimeout: 6,
      bufferSize: 70,
      strict: true,
      endOnError: true,
      failOnFrameError: false,
      // The layer says no: over the dialect.
      dropReplays: false,
      replayHold: 8,
      resumes: true,
      pendingRequests: [request]
    })
    expect(ConnectionSettings.resolve(edition, {}, {}, { replaysOnReconnect: true }).dropReplays).toBe(true)
    expect(ConnectionSettings.resolve(edition, { replaysOnReconnect: true }, {}).dropReplays).toBe(true)
  })

  it("counts: finite numbers >= 1, rounded down, else the default", () => {
    const settings = ConnectionSettings.resolve(edition, { answerBufferSize: 3.9 }, {
      bufferSize: 0,
      maxFrameSize: Number.NaN
    })
    expect(settings.bufferSize).toBe(Connection.defaults.bufferSize)
    expect(settings.answerBufferSize).toBe(3)
    expect(settings.maxFrameSize).toBe(Frame.defaultMaxFrameSize)
  })

  it("the pending requests are the connection's own, never the layer's", () => {
    const layer = { bufferSize: 5, pendingRequests: [request] }
    const settings = ConnectionSettings.resolve(edition, layer, {})
    expect(settings.pendingRequests).toEqual([])
    expect(settings.bufferSize).toBe(5)
  })
})

describe("ConnectionSettings.connectionOptions", () => {
  it("the core Connection's options: durations in ms, pending requests by key", () => {
    const settings = ConnectionSettings.resolve(
      { ...edition, duration: (given: number | undefined, defaultMillis: number) => ({ s: (given ?? defaultMillis) / 1000 }) },
      {},
      { idleTimeout: 2_000, replayHold: 500, bufferSize: 9, answerBufferSize: 3, resumes: true, pendingRequests: [request] },
      { replaysOnReconnect: true }
    )
    expect(ConnectionSettings.connectionOptions(settings, (duration) => duration.s * 1000)).toEqual({
      bufferSize: 9,
      answerBufferSize: 3,
      idleTimeoutMillis: 2_000,
      endOnError: false,
      failOnFrameError: true,
      pendingRequests: [Ledger.requestKey("a", "request_user_input")],
      replaysOnReconnect: true,
      replayHoldMillis: 500,
      resumes: true
    })
  })
})

describe("ConnectionSettings.resolver", () => {
  const resolve = ConnectionSettings.resolver(edition)

  it("a connection that sets nothing of its own shares its layer's settings, equal to resolve's and frozen", () => {
    const layer = { bufferSize: 8, idleTimeout: 1_000 }
    const first = resolve(layer, {})
    expect(resolve(layer, { pendingRequests: [] })).toBe(first)
    expect(first).toEqual(ConnectionSettings.resolve(edition, layer, {}))
    expect(Object.isFrozen(first)).toBe(true)
  })

  it("another layer, or another dialect, has settings of its own", () => {
    const layer = {}
    const plain = resolve(layer, {})
    expect(resolve({}, {})).not.toBe(plain)
    const replaying = resolve(layer, {}, { replaysOnReconnect: true })
    expect(replaying).not.toBe(plain)
    expect(replaying.dropReplays).toBe(true)
    expect(resolve(layer, {}, { replaysOnReconnect: true })).toBe(replaying)
    expect(resolve(layer, {}, { replaysOnReconnect: false })).not.toBe(plain)
  })

  it("own options given as one object share that object's settings; other own options, or pending requests, do not", () => {
    const layer = { bufferSize: 8 }
    const shared = resolve(layer, {})
    const constant = { bufferSize: 16 }
    const own = resolve(layer, constant)
    expect(own).not.toBe(shared)
    expect(own.bufferSize).toBe(16)
    expect(resolve(layer, constant)).toBe(own)
    expect(resolve({ bufferSize: 8 }, constant)).not.toBe(own)
    expect(resolve(layer, { bufferSize: 16 })).not.toBe(own)
    expect(resolve(layer, { strict: false })).not.toBe(shared)
    const pending = resolve(layer, { pendingRequests: [request] })
    expect(pending).not.toBe(shared)
    const withPending = { bufferSize: 16, pendingRequests: [request] }
    expect(resolve(layer, withPending)).not.toBe(resolve(layer, withPending))
    expect(pending.pendingRequests).toEqual([request])
    expect(shared.pendingRequests).toEqual([])
  })

  it("shared settings give one connection options object; settings with pending requests a fresh one", () => {
    const millis = (duration: number) => duration
    const shared = resolve({}, {})
    const options = ConnectionSettings.connectionOptions(shared, millis)
    expect(ConnectionSettings.connectionOptions(shared, millis)).toBe(options)
    expect(Object.isFrozen(options)).toBe(true)
    const pending = resolve({}, { pendingRequests: [request] })
    const own = ConnectionSettings.connectionOptions(pending, millis)
    expect(ConnectionSettings.connectionOptions(pending, millis)).not.toBe(own)
    expect(own.pendingRequests).toEqual([Ledger.requestKey("a", "request_user_input")])
  })
})
