import type { Engine } from "@tapedeck/engine";
import type { Output } from "../print.js";

/** Prints a run's log lines on stderr, so stdout holds only the output. */
export async function printLogs(engine: Engine, runId: string, out: Output): Promise<void> {
  for (let from = 0; ; ) {
    const page = await engine.journal(runId, from, 1000);
    for (const entry of page) if (entry.kind === "log") out.stderr(`[${entry.level}] ${entry.message}`);
    if (page.length < 1000) return;
    from += page.length;
  }
}
