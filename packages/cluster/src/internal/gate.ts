/** This line's binding of `binding/internal/gate.ts` (written once for both cluster editions). */
export * from "../../binding/internal/gate.js"
