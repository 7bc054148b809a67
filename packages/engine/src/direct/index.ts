/**
 * Direct tool mode's parts that do not depend on the call intake: each model tool call of a
 * session is decided, rendered and bounded by these, as data, so that the same rules work
 * embedded and over HTTP. Not yet exported from the package: the lead wires them into the
 * session journal, the server and the SDK.
 */
export * from "./approval-policy.js";
export * from "./approval-decision.js";
export * from "./gateway-rules.js";
export * from "./json-pointer.js";
export * from "./linear-regex.js";
export * from "./summary-template.js";
export * from "./tool-glob.js";
export * from "./tool-risk.js";
export * from "./approval-signature.js";
export * from "./binding-diff.js";
export * from "./direct-binding.js";
export * from "./direct-options.js";
export * from "./lazy-menu.js";
export * from "./model-name-table.js";
export * from "./own-tools.js";
export * from "./failure-text.js";
export * from "./model-content.js";
export * from "./result-blocks.js";
export * from "./blob-store.js";
export * from "./fetch-blob.js";
export * from "./spill.js";
export * from "./sqlite-blob-store.js";
export * from "./token-estimate.js";
export * from "./business-errors.js";
export * from "./anthropic-lowering.js";
export * from "./first-request-tokens.js";
export * from "./lazy-order-check.js";
export * from "./menu-lowering.js";
export * from "./openai-lowering.js";
export * from "./tool-find.js";
