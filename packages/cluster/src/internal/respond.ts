/** This line's binding of `binding/internal/respond.ts` (written once for both cluster editions). */
export * from "../../binding/internal/respond.js"
