/**
 * The types of the HTTP rules (`Http`'s `Headers`) and what success is, written below the modules
 * that use them (the error messages, the reading of bodies, the `Idempotency-Key` rules) so that
 * every import runs one way. Re-exported by `Http`.
 */

/**
 * Response headers, by lower-case name.
 *
 * @since 0.1.0
 * @category models
 */
export type Headers = { readonly [name: string]: string | undefined }

/**
 * Whether a status is success: any 2xx.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300
