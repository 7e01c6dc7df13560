/**
 * The options of one connection with their defaults applied, written once for every edition: a
 * connection's own options over the layer's (the service's), over the dialect's, over the
 * protocol's defaults (`Connection.defaults`). An edition gives its duration type, how it reads a
 * duration given by the user, and its default schedules; the counts and switches are resolved
 * here, and so are the options of the core's `Connection`.
 *
 * @since 0.1.0
 */
import { Connection, Frame } from "effect-agent-session-core"
import { keyOf, type Request } from "./ConnectionShell.js"

/**
 * A connection's options as the user gives them (each edition's `EventStream.ConnectOptions`):
 * `DI` a duration as given, `S` a retry schedule.
 *
 * @since 0.1.0
 * @category models
 */
export interface Given<DI, S> {
  readonly reconnect?: S | undefined
  readonly firstConnect?: S | undefined
  readonly idleTimeout?: DI | undefined
  readonly connectTimeout?: DI | undefined
  readonly answerTimeout?: DI | undefined
  readonly replayHold?: DI | undefined
  readonly bufferSize?: number | undefined
  readonly answerBufferSize?: number | undefined
  readonly maxFrameSize?: number | undefined
  readonly strict?: boolean | undefined
  readonly endOnError?: boolean | undefined
  readonly failOnFrameError?: boolean | undefined
  readonly replaysOnReconnect?: boolean | undefined
  readonly resumes?: boolean | undefined
}

/**
 * Every option of a connection, with its default applied: `D` a duration, `S` a retry schedule,
 * `Q` a request received on an earlier connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings<D, S, Q extends Request = Request> {
  readonly reconnect: S
  readonly firstConnect: S
  readonly idleTimeout: D
  readonly connectTimeout: D
  readonly answerTimeout: D
  readonly bufferSize: number
  readonly answerBufferSize: number
  readonly maxFrameSize: number
  readonly strict: boolean
  readonly endOnError: boolean
  readonly failOnFrameError: boolean
  /** The service is known to replay on a reconnect: a proven replay is dropped (the core's `Replay`). */
  readonly dropReplays: boolean
  /** How long after an open frames that may be a replay are held at most. */
  readonly replayHold: D
  /** It continues a channel watched before: retried on `reconnect` until it first opens (the core's `Connection`). */
  readonly resumes: boolean
  readonly pendingRequests: ReadonlyArray<Q>
}

/**
 * What an edition gives: its durations and its default schedules.
 *
 * @since 0.1.0
 * @category models
 */
export interface Edition<DI, D, S> {
  /** A duration as given, or the default (in ms) when none was. */
  readonly duration: (given: DI | undefined, defaultMillis: number) => D
  /** The protocol's reconnect schedule (`Connection.defaults.reconnect`) in the edition's terms. */
  readonly reconnect: S
  /** The retry of a connection never open (`Connection.defaults.firstConnect`) in the edition's terms. */
  readonly firstConnect: S
}

/**
 * The settings of one connection: its own options over the layer's, over the dialect's (whether
 * the service replays on a reconnect), over the defaults. Counts are `positiveInt`s; the pending
 * requests are the connection's own only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = <DI, D, S, Q extends Request>(
  edition: Edition<DI, D, S>,
  layer: Given<DI, S>,
  own: Given<DI, S> & { readonly pendingRequests?: ReadonlyArray<Q> | undefined },
  dialect?: { readonly replaysOnReconnect?: boolean | undefined }
): Settings<D, S, Q> => ({
  reconnect: own.reconnect ?? layer.reconnect ?? edition.reconnect,
  firstConnect: own.firstConnect ?? layer.firstConnect ?? edition.firstConnect,
  idleTimeout: edition.duration(own.idleTimeout ?? layer.idleTimeout, Connection.defaults.idleTimeoutMillis),
  connectTimeout: edition.duration(own.connectTimeout ?? layer.connectTimeout, Connection.defaults.connectTimeoutMillis),
  answerTimeout: edition.duration(own.answerTimeout ?? layer.answerTimeout, Connection.defaults.answerTimeoutMillis),
  bufferSize: Connection.positiveInt(own.bufferSize ?? layer.bufferSize, Connection.defaults.bufferSize),
  answerBufferSize: Connection.positiveInt(own.answerBufferSize ?? layer.answerBufferSize, Connection.defaults.answerBufferSize),
  maxFrameSize: Connection.positiveInt(own.maxFrameSize ?? layer.maxFrameSize, Frame.defaultMaxFrameSize),
  pendingRequests: own.pendingRequests ?? [],
  strict: own.strict ?? layer.strict ?? false,
  endOnError: own.endOnError ?? layer.endOnError ?? false,
  failOnFrameError: own.failOnFrameError ?? layer.failOnFrameError ?? true,
  dropReplays: own.replaysOnReconnect ?? layer.replaysOnReconnect ?? dialect?.replaysOnReconnect ?? false,
  replayHold: edition.duration(own.replayHold ?? layer.replayHold, Connection.defaults.replayHoldMillis),
  resumes: own.resumes ?? layer.resumes ?? false
})

/** The connection options of settings without pending requests, made once per settings object. */
const sharedOptions = new WeakMap<Settings<unknown, unknown>, Connection.Options>()

/** The options a connection may set for itself; `pendingRequests` and `agent` aside. */
const settingNames = [
  "reconnect",
  "firstConnect",
  "idleTimeout",
  "connectTimeout",
  "answerTimeout",
  "replayHold",
  "bufferSize",
  "answerBufferSize",
  "maxFrameSize",
  "strict",
  "endOnError",
  "failOnFrameError",
  "replaysOnReconnect",
  "resumes"
] as const

/** Whether a connection's own options change nothing of the layer's. */
const setsNothing = <DI, S>(own: Given<DI, S>): boolean => settingNames.every((name) => own[name] === undefined)

/** Settings by the dialect's `replaysOnReconnect`. */
type ByDialect<D, S> = Map<boolean | undefined, Settings<D, S, never>>

/**
 * {@link resolve} for one edition, its settings shared. A connection without pending requests
 * gets the settings made on first use for its layer's options, its own options object and its
 * dialect, instead of one per connection (a connection holds its settings for its whole life):
 * - own options that set nothing (the usual case: `AgentSessions.start`, `EventStream.events`
 *   without options, a fresh `{}` each time) share the layer's;
 * - own options given as one object for many connections (a constant) share that object's.
 *
 * Shared settings are frozen; the options objects they are made of are held weakly.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolver = <DI, D, S>(edition: Edition<DI, D, S>) => {
  const ofLayer = new WeakMap<Given<DI, S>, ByDialect<D, S>>()
  const ofOwn = new WeakMap<Given<DI, S>, WeakMap<Given<DI, S>, ByDialect<D, S>>>()
  const cached = (
    byDialect: ByDialect<D, S>,
    layer: Given<DI, S>,
    own: Given<DI, S>,
    dialect: { readonly replaysOnReconnect?: boolean | undefined } | undefined
  ): Settings<D, S, never> => {
    const replays = dialect?.replaysOnReconnect
    let settings = byDialect.get(replays)
    if (settings === undefined) {
      settings = Object.freeze(resolve<DI, D, S, never>(edition, layer, own, dialect))
      byDialect.set(replays, settings)
    }
    return settings
  }
  return <Q extends Request>(
    layer: Given<DI, S>,
    own: Given<DI, S> & { readonly pendingRequests?: ReadonlyArray<Q> | undefined },
    dialect?: { readonly replaysOnReconnect?: boolean | undefined }
  ): Settings<D, S, Q> => {
    if (own.pendingRequests !== undefined && own.pendingRequests.length > 0) return resolve(edition, layer, own, dialect)
    if (setsNothing(own)) {
      let byDialect = ofLayer.get(layer)
      if (byDialect === undefined) {
        byDialect = new Map()
        ofLayer.set(layer, byDialect)
      }
      return cached(byDialect, layer, {}, dialect)
    }
    let byOwn = ofOwn.get(layer)
    if (byOwn === undefined) {
      byOwn = new WeakMap()
      ofOwn.set(layer, byOwn)
    }
    let byDialect = byOwn.get(own)
    if (byDialect === undefined) {
      byDialect = new Map()
      byOwn.set(own, byDialect)
    }
    return cached(byDialect, layer, own, dialect)
  }
}

/**
 * The options of the core's `Connection` for these settings (`millis`: the edition's duration in
 * ms); the pending requests by their keys. Settings without pending requests (shared by
 * {@link resolver}) give one options object, shared too: a connection holds its options for its
 * whole life.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectionOptions = <D, S>(settings: Settings<D, S>, millis: (duration: D) => number): Connection.Options => {
  const shared = settings.pendingRequests.length === 0
  if (shared) {
    const known = sharedOptions.get(settings)
    if (known !== undefined) return known
  }
  const options: Connection.Options = {
    bufferSize: settings.bufferSize,
    answerBufferSize: settings.answerBufferSize,
    idleTimeoutMillis: millis(settings.idleTimeout),
    endOnError: settings.endOnError,
    failOnFrameError: settings.failOnFrameError,
    pendingRequests: settings.pendingRequests.map(keyOf),
    replaysOnReconnect: settings.dropReplays,
    replayHoldMillis: millis(settings.replayHold),
    resumes: settings.resumes
  }
  if (shared) sharedOptions.set(settings, Object.freeze(options))
  return options
}
