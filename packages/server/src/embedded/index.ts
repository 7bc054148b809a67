/**
 * @tapedeck/server/embedded: the SDK's client over an engine in this process, without HTTP
 * (what `Tapedeck.embedded` loads). Everything exported here is public API.
 */
export { embedded } from "./embedded.js";
