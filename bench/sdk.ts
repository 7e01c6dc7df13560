/** The SDK side (placeholder until src/EventStream.ts has its layer). */
import type { Client } from "./child.js"

const unavailable = (): Promise<never> => Promise.reject(new Error("EventStream.layer is not available yet"))

/** The SDK client. */
export const client: Client = {
  throughput: unavailable,
  hold: unavailable,
  slowConsumer: unavailable,
  reconnect: unavailable
}
