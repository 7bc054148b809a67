/**
 * @tapedeck/server/http: the HTTP server, as a library (`tapedeck serve` is a thin shell over
 * it). Everything exported here is public API.
 */
export { startServer } from "../runtime/start-server.js";
export type { RunningServer } from "../runtime/start-server.js";
export type { ServeOptions } from "../runtime/serve-options.js";
export { DEFAULT_HOST, DEFAULT_PORT } from "../runtime/serve-options.js";
export { createApiKey } from "./auth/api-keys.js";
export type { NewApiKey } from "./auth/api-keys.js";
