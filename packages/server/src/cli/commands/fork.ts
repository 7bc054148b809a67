import type { JsonValue } from "@tapedeck/protocol";
import { optionalFlag, parse, UsageError } from "../args.js";
import { withEngine, parseJsonFlag, readTextFile } from "../context.js";
import { formatDiagnostics, printEnd, type Output } from "../print.js";
import { printLogs } from "./logs.js";

export const forkUsage = "tapedeck fork <run_id> <script.ts> [--host <module>] [--input <json>] [--data <dir>]";

/**
 * Forks a run with corrected code: calls the parent already completed (same tool and
 * arguments, in order) are answered from its journal, not sent again. Prints the new run's
 * outcome as `run` does; its id goes to stderr.
 */
export async function forkCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { host: { type: "string" }, input: { type: "string" } });
  const [parent, scriptPath] = positionals;
  if (!parent) throw new UsageError("missing <run_id>");
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const source = readTextFile(scriptPath, "script");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  return withEngine(values.data, optionalFlag(values.host, "host"), async (engine) => {
    const started = await engine.fork({ parent, source, ...(input === undefined ? {} : { input }) });
    if (started.kind === "refused") {
      out.stderr(formatDiagnostics(started.diagnostics));
      return 1;
    }
    out.stderr(`run ${started.runId} (fork of ${parent})`);
    const end = await started.end;
    await printLogs(engine, started.runId, out);
    return printEnd(out, end);
  });
}
