/**
 * Every wire choice the document leaves open, gathered in one value. `Dialect.documented` (the
 * default) follows `service-interface.md`; `Dialect.observed` is how the service's own JavaScript
 * client talks to the live service. `Dialect.make` mixes the two.
 *
 * @since 0.1.0
 */
export * from "../binding/Dialect.js"
