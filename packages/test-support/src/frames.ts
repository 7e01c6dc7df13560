/**
 * The frames the load generator sends, shared by the server and the clients (which only use the
 * constants). Every frame is an `action_run` of the documented framing, about 200 bytes, with
 * its index in `content` so a client can check that the last frame is the last one sent.
 */

/** The session id prefix of each scenario the load generator serves. */
export const Scenario = {
  /** `tp-<N>`: N action_run frames as fast as the socket takes them, then complete, then close 1000. */
  throughput: "tp",
  /** `hold-<i>`: one `started` frame, then the socket stays open until the client closes it. */
  hold: "hold",
  /** `drop-<id>-<K>-<D>`: K frames, then an abrupt drop, D times; then K frames, complete, close. */
  drop: "drop"
} as const

/** The text of action_run frame `i` (a fixed width, so every frame has the same size). */
export const actionRunFrame = (i: number): string =>
  JSON.stringify({
    event: "action_run",
    data: {
      name: "click",
      action_session_id: "as_1",
      content: `${String(i).padStart(9, "0")} Clicking the "Sign in" button in the header of https://example.com/account`
    }
  })

/** The `complete` frame that ends a throughput stream. */
export const completeFrame = (sessionId: string): string =>
  JSON.stringify({
    event: "complete",
    data: { response: "done", type: "STRING", total_cost: 0.01, session_id: sessionId }
  })

/** The `started` frame a held connection receives once. */
export const startedFrame = (sessionId: string): string =>
  JSON.stringify({ event: "started", data: { sessionId, start_url: "https://example.com" } })

/** The index carried by an action_run frame's content. */
export const frameIndex = (content: string): number => Number.parseInt(content.slice(0, 9), 10)

/** Milliseconds on a clock shared by processes on the same machine (sub-millisecond precision). */
export const sharedNow = (): number => performance.timeOrigin + performance.now()

/** The first frame after a reconnect in the drop scenario: it carries when the server dropped the socket. */
export const afterDropFrame = (i: number, droppedAt: number): string =>
  JSON.stringify({
    event: "action_run",
    data: { name: "click", action_session_id: "as_1", content: `${String(i).padStart(9, "0")} dropped-at ${droppedAt}` }
  })

/** When the server dropped the socket, read from an {@link afterDropFrame}'s content; NaN for other frames. */
export const droppedAt = (content: string): number => {
  const parts = content.split(" ")
  return parts[1] === "dropped-at" && parts[2] !== undefined ? Number(parts[2]) : Number.NaN
}
