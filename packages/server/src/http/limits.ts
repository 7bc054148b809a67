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

/**
 * Bytes an event stream may hold for a client that does not read them (past what the socket's
 * kernel buffers took): past it the client has fallen behind, is told "events lost, reload from
 * N" and the stream closes. So a stalled or vanished consumer costs the server at most this
 * much, and never holds the engine (the streams read from the store at their own pace). Two
 * MiB: one value of the largest size the engine records, with room for its envelope.
 */
export const EVENT_BUFFER_BYTES = 2 * 1024 * 1024 + 64 * 1024;

/** How often an idle event stream sends a comment: proxies and load balancers drop connections quiet for a minute. */
export const EVENT_HEARTBEAT_MS = 15_000;

/** Journal entries (or changed runs) read from the store at a time for a stream: small, since one entry may be 2 MiB. */
export const EVENT_PAGE = 16;

/** How long a stream told it fell behind keeps its socket, for the client to read that notice, before the server lets go of it. */
export const EVENT_LOST_GRACE_MS = 30_000;
