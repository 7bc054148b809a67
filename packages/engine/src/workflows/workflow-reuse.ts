import { PrimitiveTool, type JournalEntry } from "@tapedeck/protocol";

/**
 * What a fork may reuse of its parent's workflow calls. A completed `workflows.<name>.start` is
 * reused only when the parent also got that child's output (a completed `result()`): the fork
 * then takes the same child id and its `result()` takes the recorded output, so the child's work
 * is not done again. A child the parent did not see complete (still running, failed, never
 * awaited) is not reused: the fork starts its own, since a child wakes only the run that started
 * it, and a fork usually exists to fix what went wrong.
 *
 * Returns the parent's journal without the `call.completed` entries of starts it may not reuse.
 */
export function reusableWorkflowCalls(parent: readonly JournalEntry[]): readonly JournalEntry[] {
  const tools = new Map<number, string>();
  const results = new Map<number, string>();
  const resultIds = new Set<string>();
  for (const entry of parent) {
    if (entry.kind === "call.scheduled") {
      tools.set(entry.seq, entry.tool);
      if (entry.tool === PrimitiveTool.workflowResult) results.set(entry.seq, idOf(entry.args) ?? "");
    }
    if (entry.kind === "call.completed" && results.has(entry.seq)) resultIds.add(results.get(entry.seq)!);
  }
  if (![...tools.values()].includes(PrimitiveTool.workflowStart)) return parent;
  return parent.filter((entry) => {
    if (entry.kind !== "call.completed" || tools.get(entry.seq) !== PrimitiveTool.workflowStart) return true;
    const id = idOf(entry.result);
    return id !== undefined && resultIds.has(id);
  });
}

function idOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" ? id : undefined;
}
