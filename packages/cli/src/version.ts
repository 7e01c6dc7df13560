/**
 * The version of the command line, printed by `--version`. A test keeps it equal to the
 * `version` of `packages/cli/package.json`.
 *
 * @since 0.1.0
 */
export const version = "0.1.0"
