import { PrimitiveTool, type JournalEntry, type JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";

/**
 * What a fork may reuse: the calls its parent completed, in the parent's order. A call of the
 * fork whose tool and canonical arguments match an unused one takes its recorded result instead
 * of being sent; each recorded call is used at most once. Only results are reused: a call that
 * failed in the parent is sent again, since the fork usually exists to fix what made it fail.
 *
 * Waits match on what the script asked for, not on when: a fork's `sleep("10d")` reuses the
 * parent's completed ten-day sleep (its `until` differs), and its `signal("approved")` takes the
 * payload the parent received, which no one would send again. A webhook is never reused: its
 * URL is bound to the parent.
 */
export interface Reused {
  readonly parentSeq: number;
  readonly result: JsonValue;
}

export class ReusePool {
  private readonly calls: { seq: number; tool: string; args: string; result: JsonValue; used: boolean }[] = [];

  /** The pool of `parent`'s completed calls, less those the fork's own journal already reused. */
  constructor(
    readonly parentId: string,
    parent: readonly JournalEntry[],
    own: readonly JournalEntry[],
  ) {
    const scheduled = new Map<number, { tool: string; args: string }>();
    for (const entry of parent) {
      if (entry.kind === "call.scheduled" && entry.tool !== PrimitiveTool.webhook)
        scheduled.set(entry.seq, { tool: entry.tool, args: matchKey(entry.tool, entry.args) });
      if (entry.kind === "call.completed") {
        const call = scheduled.get(entry.seq);
        if (call) this.calls.push({ seq: entry.seq, ...call, result: entry.result, used: false });
      }
    }
    this.calls.sort((a, b) => a.seq - b.seq);
    const alreadyUsed = new Set(own.flatMap((e) => (e.kind === "call.completed" && e.reusedFrom ? [e.reusedFrom.seq] : [])));
    for (const call of this.calls) call.used = alreadyUsed.has(call.seq);
  }

  /** The first unused recorded call with this tool and these (canonical) arguments, left unused (see `use`). */
  peek(tool: string, args: JsonValue): Reused | undefined {
    const text = matchKey(tool, args);
    const call = this.calls.find((c) => !c.used && c.tool === tool && c.args === text);
    return call && { parentSeq: call.seq, result: call.result };
  }

  /** Marks a recorded call `peek` gave as used: no other call of the fork takes it. */
  use(reused: Reused): void {
    const call = this.calls.find((c) => c.seq === reused.parentSeq);
    if (call) call.used = true;
  }
}

/** What two calls must share to match: their canonical arguments, or for a wait what it waits for. */
function matchKey(tool: string, args: JsonValue): string {
  const object = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  if (tool === PrimitiveTool.sleep) return canonicalJson({ ms: object.ms ?? null });
  if (tool === PrimitiveTool.signal) return canonicalJson({ name: object.name ?? null, timeoutMs: object.timeoutMs ?? null });
  return canonicalJson(args);
}
