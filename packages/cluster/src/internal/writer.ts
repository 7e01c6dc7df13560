/** This line's binding of `binding/internal/writer.ts` (written once for both cluster editions). */
export * from "../../binding/internal/writer.js"
