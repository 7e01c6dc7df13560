/**
 * The package version, sent in the `User-Agent` header. A test keeps it equal to the
 * `version` of `package.json`.
 */
export const version = "0.1.0"

/** The `User-Agent` the SDK sends: `effect-agent-session/<version>`. */
export const userAgent = `effect-agent-session/${version}`
