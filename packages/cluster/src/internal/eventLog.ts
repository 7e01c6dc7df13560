/**
 * This line's binding of `binding/internal/eventLogSql.ts` (the store in PostgreSQL) and of the
 * helpers of `binding/internal/eventLogMemory.ts` (both written once for both cluster editions).
 */
export * from "../../binding/internal/eventLogSql.js"
export {
  AnswerSchema,
  type AnswerEncoded,
  claimLost,
  claimRetryHints,
  fail,
  isClaimLost,
  makeMemory,
  runnerOf,
  toAnswer,
  unknownRecord
} from "../../binding/internal/eventLogMemory.js"
