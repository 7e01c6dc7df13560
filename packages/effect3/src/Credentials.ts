/**
 * The keys the SDK authenticates with, and which key each operation uses.
 *
 * The account key and agent keys are held as `Redacted`: they never print. The account key is
 * read afresh for every request and every (re)connect, so a rotated key is picked up.
 *
 * @since 0.1.0
 */
export * from "../binding/Credentials.js"
