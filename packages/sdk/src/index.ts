/**
 * @tapedeck/sdk: the thin client of Tapedeck (fetch only; it never depends on the engine).
 * The HTTP client, workers and agent tools arrive with the [server] and [agent-tools] issues;
 * today it carries the shared types and errors. Everything exported here is public API.
 */
export { FailureCode, RunStatus, ToolError, formatRunError, isOutcome, toolFailure } from "@tapedeck/protocol";
export type { JournalEntry, JsonValue, PinnedToolset, RunError, ToolFailure, ToolsetSpec } from "@tapedeck/protocol";
