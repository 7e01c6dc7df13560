/**
 * The service's HTTP operations: onboard an agent, create a session, and (observed dialect only)
 * retrieve a session. The client is derived from the contract in `ServiceApi` with
 * `HttpApiClient`, over the platform `HttpClient`.
 *
 * - Input is validated before anything is sent (`InvalidRequest`); a missing key fails
 *   with `MissingCredentials` before any request.
 * - Every non-2xx status is mapped to its typed error in one place; transport
 *   failures are `TransportError`, a 2xx that does not match the contract `ResponseDecodeError`,
 *   and no response within the time-out (default 30 s) `RequestTimeout`.
 * - Transport errors, time-outs, 408, 429 and 5xx are retried on a `Schedule` (default 2 retries,
 *   exponential from 500 ms, factor 2, jittered, capped at 8 s), each wait at least what
 *   `Retry-After` / `retry-after-ms` asks, capped by `maxRetryAfter` (default 60 s).
 * - Every request carries `User-Agent: effect-agent-session/<version>` and the dialect's
 *   auth header; the key is unwrapped from `Redacted` only where the header is written.
 * - A response body is read within `maxResponseSize` (default 4 MiB), enforced while reading:
 *   a 2xx over it is `ResponseTooLarge` (not retried); redirects are not followed.
 *
 * @since 0.1.0
 */
export * from "../binding/AgentApi.js"
