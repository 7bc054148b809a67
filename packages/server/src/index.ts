/**
 * @tapedeck/server: the `tapedeck` command (and, later, the HTTP server). Everything exported
 * here is public API.
 */
export { cli } from "./cli/cli.js";
export type { Output } from "./cli/print.js";
