/**
 * The small checks of JSON values the parts of the recording format share.
 */
import type { Parsed } from "./model.js"

type Obj = { readonly [field: string]: unknown }

export const isObject = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)
export const isString = (u: unknown): u is string => typeof u === "string"

export const parseJson = (text: string): Parsed<unknown> => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, reason: "not JSON" }
  }
}
