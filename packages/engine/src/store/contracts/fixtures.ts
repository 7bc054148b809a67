/** Runs, entries and toolsets the contract suites write: awkward values, each kind of entry. */
import type { JournalEntry, JournalEvent, JsonValue, PinnedToolset } from "@tapedeck/protocol";
import { StoreConflictError } from "../store-conflict-error.js";
import type { NewRun } from "../run-store.js";

export function isConflict(error: unknown): boolean {
  return error instanceof StoreConflictError && error.code === "store_conflict";
}

export const toolset: PinnedToolset = {
  id: "ts_contract",
  tools: [
    {
      group: "github",
      name: "list_issues",
      source: "mcp",
      description: "Lists issues.",
      inputSchema: { type: "object", properties: { repo: { type: "string" } }, required: ["repo"] },
      outputSchema: true,
      policy: { onInterruption: "retry", timeoutMs: 300_000, heartbeatTimeoutMs: 60_000, concurrency: 16, approval: false },
    },
  ],
};

export function newRun(id: string, fields: Partial<Omit<NewRun, "id">> = {}): NewRun {
  return {
    id,
    toolsetId: toolset.id,
    source: "const r = await github.list_issues({ repo: 'a/b' });\nexport default r;",
    js: "const r = await github.list_issues({ repo: 'a/b' });",
    sourceMap: '{"version":3,"mappings":"AAAA"}',
    input: { n: 1 },
    status: "queued",
    createdAt: 1_700_000_000_000,
    ...fields,
  };
}

const at = (index: number): number => 1_700_000_000_000 + index;
export const entry = (index: number, event: JournalEvent): JournalEntry => ({ index, at: at(index), ...event });
export const started = (index: number): JournalEntry => entry(index, { kind: "run.started", input: { n: 1 }, replayVersion: 1 });
export const log = (index: number): JournalEntry => entry(index, { kind: "log", level: "info", message: `line ${index}` });
/** An entry JSON cannot encode (a BigInt): writing it throws part-way through a write. */
export const unserializable = (index: number): JournalEntry => entry(index, { kind: "call.completed", seq: 1, result: { n: 10n } as unknown as JsonValue });
export const failed = (index: number): JournalEntry => entry(index, { kind: "run.failed", error: runError });

export const runError = {
  kind: "script",
  name: "ToolError",
  message: "list_issues failed: rate limited",
  failure: { code: "rate_limited", message: "try again in 30 s", retryable: true, details: { after: 30 } },
  call: { seq: 3, tool: "github.list_issues" },
  position: { line: 2, column: 11 },
  stack: "ToolError: list_issues failed\n    at script.ts:2:11",
  frame: "> 2 | const r = await github.list_issues(…)\n    |           ^",
} as const;

/** One entry of every kind, with awkward values: unicode, nulls, nesting, floats, control characters. */
export function everyKind(from: number): JournalEntry[] {
  const events: JournalEvent[] = [
    { kind: "run.started", input: { q: "héllo ✓ 🎉", n: [1, 2.5, -3e-7, null], deep: { a: { b: [true, false] } } }, replayVersion: 2 },
    { kind: "call.scheduled", seq: 1, tool: "github.list_issues", args: { repo: "a/b", labels: ["bug"] }, key: "run_a/1" },
    { kind: "call.attempt", seq: 1, attempt: 2, reason: "the engine restarted" },
    { kind: "call.completed", seq: 1, result: [{ id: 1, title: 'say "hi"\n' }, null, "", 0] },
    { kind: "call.rejected", seq: 2, tool: "fs.read", args: null, error: { code: "invalid_arguments", message: "path: required" } },
    { kind: "call.scheduled", seq: 3, tool: "github.list_issues", args: {}, key: "run_a/3" },
    { kind: "call.failed", seq: 3, error: runError.failure },
    { kind: "call.parked", seq: 4, reason: "tool.schema_changed", message: "github.list_issues now requires owner" },
    { kind: "call.decided", seq: 4, decision: "rejected", reason: "not now" },
    { kind: "log", level: "warn", message: "tab\there, nul\u0000, bell\u0007" },
    { kind: "run.completed", output: { ok: true, count: 2 } },
    { kind: "run.failed", error: runError },
  ];
  return events.map((event, i) => entry(from + i, event));
}
