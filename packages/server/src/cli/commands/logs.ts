import type { Engine } from "@tapedeck/engine";
import { journalEntries } from "../context.js";
import type { Output } from "../print.js";
import { escapeLine } from "../../terminal-text.js";

/**
 * Prints a run's log lines from journal index `from` on stderr, so stdout holds only the
 * output: the script's, and those its tools logged (a user tool's `console`), each of these
 * after the tool and the call's number. Resolves with the index after the last entry read:
 * where the next call goes on.
 */
export async function printLogs(engine: Engine, runId: string, out: Output, from = 0): Promise<number> {
  let next = from;
  // Calls scheduled before `from` are named by their number alone.
  const tools = new Map<number, string>();
  for await (const entry of journalEntries(engine, runId, from)) {
    if (entry.kind === "log") out.stderr(`[${entry.level}] ${entry.message}`);
    if (entry.kind === "call.scheduled") tools.set(entry.seq, entry.tool);
    if ((entry.kind === "call.completed" || entry.kind === "call.failed") && entry.logs !== undefined) {
      const tool = tools.get(entry.seq);
      // One line each (a newline in a tool's line is shown as \n): a tool cannot print a line that looks like another's.
      for (const log of entry.logs) out.stderr(escapeLine(`[${log.level}] ${tool === undefined ? "" : `${tool} `}#${entry.seq}: ${log.message}`));
    }
    next = entry.index + 1;
  }
  return next;
}
