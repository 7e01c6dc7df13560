/**
 * Sessions: the create-session request, the session the service returns, and its status.
 *
 * @since 0.1.0
 */
export * from "../binding/Session.js"
