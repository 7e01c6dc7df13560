/**
 * The types of the HTTP rules (`Http`'s `Headers`), written below the modules that use them (the
 * error messages, the reading of bodies, the `Idempotency-Key` rules) so that every import runs
 * one way. Re-exported by `Http`.
 */

/**
 * Response headers, by lower-case name.
 *
 * @since 0.1.0
 * @category models
 */
export type Headers = { readonly [name: string]: string | undefined }
