/**
 * @tapedeck/server: the `tapedeck` command, the HTTP server, and the embedded client.
 * Everything exported here is public API.
 */
export { cli } from "./cli/cli.js";
export type { Output } from "./cli/print.js";
export { startServer } from "./http/start-server.js";
export type { RunningServer } from "./http/start-server.js";
export type { ServeOptions } from "./http/serve-options.js";
export { embedded } from "./embedded/embedded.js";
