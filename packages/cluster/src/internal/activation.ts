/** This line's binding of `binding/internal/activation.ts` (written once for both cluster editions). */
export * from "../../binding/internal/activation.js"
