/** This line's binding of `binding/internal/answerWatch.ts` (written once for both cluster editions). */
export * from "../../binding/internal/answerWatch.js"
