import type { Engine } from "@tapedeck/engine";
import { journalEntries } from "../context.js";
import type { Output } from "../print.js";

/** Prints a run's log lines on stderr, so stdout holds only the output. */
export async function printLogs(engine: Engine, runId: string, out: Output): Promise<void> {
  for await (const entry of journalEntries(engine, runId)) if (entry.kind === "log") out.stderr(`[${entry.level}] ${entry.message}`);
}
