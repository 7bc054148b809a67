/**
 * @tapedeck/server/embedded: an engine in this process and a connection to it without a socket,
 * what `Tapedeck.embedded` (the SDK) loads and builds its client over (`EmbeddedModule` of
 * @tapedeck/protocol). Everything exported here is public API.
 */
export { openEmbedded } from "./embedded.js";
