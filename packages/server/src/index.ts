/**
 * @tapedeck/server: the `tapedeck` command, the HTTP server, and the embedded engine.
 * Everything exported here is public API.
 */
export { cli } from "./cli/cli.js";
export type { Output } from "./cli/print.js";
export { startServer } from "./runtime/start-server.js";
export type { RunningServer } from "./runtime/start-server.js";
export type { ServeOptions } from "./runtime/serve-options.js";
export { openEmbedded } from "./embedded/embedded.js";
