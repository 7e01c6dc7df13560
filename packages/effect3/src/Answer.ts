/**
 * The caller's answer to an `external_resource_requested` event.
 *
 * @since 0.1.0
 */
export * from "../binding/Answer.js"
