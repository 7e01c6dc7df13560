/** This line's binding of `binding/internal/resumer.ts` (written once for both cluster editions). */
export * from "../../binding/internal/resumer.js"
