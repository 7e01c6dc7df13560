/**
 * The HTTP side of a replay (see `replay.ts`): JSON answers, the account key, and the create
 * route, answered with the recorded response (or error) once the request matches the recorded one.
 */
import { Recording as Format } from "effect-agent-session-core"
import type * as Http from "node:http"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { AgentSessionError, InvalidRecording } from "effect-agent-session/Errors"
import * as ServiceApi from "effect-agent-session/ServiceApi"
import { CreateSessionRequest, SessionInfo } from "effect-agent-session/Session"
import { errorResponse } from "./api.js"
import * as Body from "./body.js"
import type { ReplayServerOptions, Runs } from "./replayRuns.js"

const decodeError = Schema.decodeUnknownEither(AgentSessionError)
const decodeSession = Schema.decodeUnknownEither(SessionInfo)
const encodeRequest = Schema.encodeEither(CreateSessionRequest)

/** Answers with `body` as JSON (a response already started is destroyed). */
export const sendJson = (response: Http.ServerResponse, status: number, body: unknown) => {
  if (response.headersSent) return void response.destroy()
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}
/** Answers with an error of the contract (a response already started is destroyed). */
export const sendError = (response: Http.ServerResponse, error: Parameters<typeof errorResponse>[0]) => {
  const { body, status } = errorResponse(error)
  if (response.headersSent) return void response.destroy()
  response.writeHead(status, { "content-type": "application/json" }).end(body)
}

/** The account key's check and the create route of a replay. */
export const makeHttp = (options: ReplayServerOptions, runs: Runs) => {
  const dialect = options.header.dialect
  const { errorOf, finish, invalid, mismatch, newRun } = runs

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
      const latest = runs.latest()
      const run = latest !== undefined && !latest.finished && latest.phase === "create" ? latest : newRun()
      if (run instanceof InvalidRecording) return sendError(response, new ServiceApi.ApiServerError({ error: run.message }))
      const first = run.reader.take()
      if (first._tag !== "Entry" || first.entry.type !== "create") {
        const failure = first._tag === "Invalid"
          ? invalid(first.line, first.reason)
          : errorOf(Format.unrecordedCreate(first.line, run.creates))
        finish(run, Exit.fail(failure))
        return sendError(response, new ServiceApi.ApiNotFound({ error: `replay: ${failure.message}` }))
      }
      run.creates += 1
      // Like with like: the request as the recorder would have written it.
      const actual = Format.scrubValue(Either.getOrElse(encodeRequest(decoded.right), () => ({})), [options.accountKey])
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

  return { authorized, sessionJson, create } as const
}
