/**
 * What a runner records of what it saw, the same for both editions: a failure as the verdict
 * reads it, the keep-alive events, and the answer a replay scenario gives to a request.
 */
import type { GivenAnswer, ReplayAnswer } from "./scenario.js"
import type { Ending } from "./verdict.js"

/** A value as JSON, or why it could not be. */
export const json = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ""
  } catch (cause) {
    return `(not JSON: ${String(cause)})`
  }
}

/** A failure as the suite records it: its tag, every text of it, its plain fields. */
export const failed = (error: { readonly _tag: string; readonly message: string }): Ending => ({
  _tag: "Failed",
  tag: error._tag,
  text: [error.message, String(error), json(error)].join("\n"),
  fields: Object.fromEntries(
    Object.entries<unknown>(error).filter((entry): entry is [string, string | number | boolean] =>
      ["string", "number", "boolean"].includes(typeof entry[1])
    )
  )
})

/** A replay's failure as the suite records it: its message among its fields. */
export const replayFailed = (error: { readonly _tag: string; readonly message: string }): Ending => {
  const ending = failed(error)
  return ending._tag === "Failed" ? { ...ending, fields: { ...ending.fields, message: error.message } } : ending
}

/** Whether an event (by its tag) is a keep-alive, counted apart from the session's events. */
export const isKeepAlive = (event: { readonly _tag: string }): boolean =>
  event._tag === "Heartbeat" || event._tag === "Connected"

/** The answer a replay scenario gives to a request for `fieldName` (a grant by field, resolved). */
export const replayAnswer = (given: ReplayAnswer, fieldName: string | undefined): GivenAnswer =>
  given._tag === "GrantByField"
    ? { _tag: "Grant", input: given.inputs[fieldName ?? ""] ?? given.otherwise }
    : given
