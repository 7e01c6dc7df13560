/** This line's binding of `binding/internal/entity.ts` (written once for both cluster editions). */
export * from "../../binding/internal/entity.js"
