import type { Engine } from "@tapedeck/engine";
import { journalEntries } from "../context.js";
import type { Output } from "../print.js";

/**
 * Prints a run's log lines from journal index `from` on stderr, so stdout holds only the
 * output. Resolves with the index after the last entry read: where the next call goes on.
 */
export async function printLogs(engine: Engine, runId: string, out: Output, from = 0): Promise<number> {
  let next = from;
  for await (const entry of journalEntries(engine, runId, from)) {
    if (entry.kind === "log") out.stderr(`[${entry.level}] ${entry.message}`);
    next = entry.index + 1;
  }
  return next;
}
