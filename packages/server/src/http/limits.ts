/**
 * Limits of the HTTP server, each with the reason for its value. Every limit has a clear error.
 * The limits the API's schemas hold requests to live with them (`@tapedeck/protocol/api`).
 */

/** Largest request body: a script and an input of up to 2 MiB (the engine's largest recorded value), with room to spare. Past it: 413. */
export const BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * A body declared (Content-Length) past the limit but below this is read and thrown away after
 * the 413, so the client, still sending, gets the answer instead of a broken pipe. Past this the
 * connection is closed at once: reading it would cost more than a clear answer is worth.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** Pending approvals listed at most (across runs). */
export const APPROVALS_LIMIT = 1000;
