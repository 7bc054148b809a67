/**
 * @tapedeck/engine/net: the address checks of the `http` tool, for other parts of a deployment
 * that connect where a tenant points them (the server's webhook deliveries). Everything
 * exported here is public API.
 */
export { classifyAddress } from "./net/address-ranges.js";
export type { AddressVerdict } from "./net/address-ranges.js";
export { describeNetError, resolvePublicAddress } from "./sources/http/public-address.js";
export type { PublicAddress } from "./sources/http/public-address.js";
export { PinnedAgents } from "./sources/http/pinned-agents.js";
export { systemResolver } from "./sources/http/resolver.js";
export type { HostResolver } from "./sources/http/resolver.js";
