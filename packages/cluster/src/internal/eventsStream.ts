/** This line's binding of `binding/internal/eventsStream.ts` (written once for both cluster editions). */
export * from "../../binding/internal/eventsStream.js"
