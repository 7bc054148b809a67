import type { JournalEntry, Run } from "./api.js";

/** How a call ended, or what it is doing: the colour of its bar. */
export type Outcome = "completed" | "failed" | "rejected" | "waiting" | "pending";

/** One call of the journal: from its `call.scheduled` to its result, with what happened between. */
export interface CallBar {
  readonly seq: number;
  readonly tool: string;
  readonly start: number;
  /** Its result's time; for a call still open, now. */
  readonly end: number;
  readonly outcome: Outcome;
  /** The entry a click opens: its result, or its scheduling while it has none. */
  readonly entry: number;
  /** What the run waits for on this call, in the wait's own words (approval, signal, sleep…). */
  readonly wait?: string;
  /**
   * The part of the bar the run spent waiting on the call rather than the tool working: a
   * sleep's or a signal's whole bar, an approval's until its decision, a park until it was
   * resumed. Undefined: no wait.
   */
  readonly waited?: { readonly from: number; readonly to: number; readonly kind: string };
  /** Attempts, decisions and parks, by time. */
  readonly marks: readonly { readonly at: number; readonly kind: string; readonly entry: number }[];
}

export interface Timeline {
  readonly start: number;
  readonly end: number;
  readonly bars: readonly CallBar[];
}

/** The script's own waits are calls too (prelude.ts): a bar that is all wait. */
const WAIT_TOOLS: Record<string, string> = { "tapedeck.sleep": "sleep", "tapedeck.signal": "signal", "tapedeck.webhook": "webhook" };

const ENDS: Record<string, Outcome> = { "call.completed": "completed", "call.failed": "failed", "call.rejected": "rejected" };

/** The calls of a journal as bars over the run's time, open ones drawn up to `now`. */
export function timelineOf(run: Run | undefined, entries: readonly JournalEntry[], now: number): Timeline {
  const ended = run !== undefined && ["completed", "failed", "cancelled"].includes(run.status);
  const start = entries[0]?.at ?? now;
  const last = entries.at(-1)?.at ?? start;
  const end = ended ? last : Math.max(last, now);
  const open = new Map<number, { tool: string; start: number; entry: number; marks: CallBar["marks"][number][] }>();
  const bars: CallBar[] = [];
  const waits = new Map((run?.waits ?? []).map((wait) => [wait.seq, wait.kind]));
  for (const entry of entries) {
    const seq = entry.seq;
    if (typeof seq !== "number") continue;
    if (entry.kind === "call.scheduled") {
      open.set(seq, { tool: String(entry.tool), start: entry.at, entry: entry.index, marks: [] });
      continue;
    }
    const outcome = ENDS[entry.kind];
    if (entry.kind === "call.rejected" && !open.has(seq)) {
      // Refused before it was scheduled (a policy): a bar of no length.
      bars.push({ seq, tool: String(entry.tool), start: entry.at, end: entry.at, outcome: "rejected", entry: entry.index, marks: [] });
      continue;
    }
    const call = open.get(seq);
    if (call === undefined) continue;
    if (outcome === undefined) {
      if (["call.attempt", "call.decided", "call.parked", "call.throttled"].includes(entry.kind))
        call.marks.push({ at: entry.at, kind: entry.kind, entry: entry.index });
      continue;
    }
    open.delete(seq);
    const waited = waitedOf(call.tool, call.start, entry.at, call.marks);
    bars.push({
      seq,
      tool: call.tool,
      start: call.start,
      end: entry.at,
      outcome,
      entry: entry.index,
      ...(waited === undefined ? {} : { waited }),
      marks: call.marks,
    });
  }
  for (const [seq, call] of open) {
    const wait = waits.get(seq);
    const waited = wait === undefined ? waitedOf(call.tool, call.start, end, call.marks) : { from: call.start, to: end, kind: wait };
    bars.push({
      seq,
      tool: call.tool,
      start: call.start,
      end,
      outcome: wait === undefined ? "pending" : "waiting",
      entry: call.entry,
      ...(wait === undefined ? {} : { wait }),
      ...(waited === undefined ? {} : { waited }),
      marks: call.marks,
    });
  }
  bars.sort((a, b) => a.seq - b.seq);
  return { start, end, bars };
}

/** How long a call was a wait: a wait tool's whole span, or from scheduling to its decision or the end of its park. */
function waitedOf(tool: string, start: number, end: number, marks: CallBar["marks"]): CallBar["waited"] {
  const own = WAIT_TOOLS[tool];
  if (own !== undefined) return { from: start, to: end, kind: own };
  const decided = marks.find((mark) => mark.kind === "call.decided");
  if (decided !== undefined) return { from: start, to: decided.at, kind: "approval" };
  const parked = marks.find((mark) => mark.kind === "call.parked");
  if (parked !== undefined) return { from: parked.at, to: marks.find((mark) => mark.at > parked.at && mark.kind !== "call.parked")?.at ?? end, kind: "parked" };
  return undefined;
}
