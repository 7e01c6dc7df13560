/** This line's binding of `binding/internal/ticker.ts` (written once for both cluster editions). */
export * from "../../binding/internal/ticker.js"
