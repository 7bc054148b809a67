import type { JsonValue } from "@tapedeck/protocol";
import { optionalFlag, parse, UsageError } from "../args.js";
import { withEngine, parseJsonFlag, readTextFile } from "../context.js";
import { followRun, printSettled } from "../follow-run.js";
import { formatDiagnostics, type Output } from "../print.js";

/**
 * Forks a run with corrected code: calls the parent already completed (same tool and
 * arguments, in order) are answered from its journal, not sent again. Prints the new run's
 * outcome as `run` does (and waits, or detaches, as `run` does); its id goes to stderr.
 */
export async function forkCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { host: { type: "string" }, input: { type: "string" }, detach: { type: "boolean" } });
  const [parent, scriptPath] = positionals;
  if (!parent) throw new UsageError("missing <run_id>");
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const source = readTextFile(scriptPath, "script");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  const host = optionalFlag(values.host, "host");
  return withEngine(values.data, host, async (engine) => {
    const started = await engine.fork({ parent, source, ...(input === undefined ? {} : { input }) });
    if (started.kind === "refused") {
      out.stderr(formatDiagnostics(started.diagnostics, scriptPath));
      out.stderr(`${scriptPath} does not type-check: no run was started.`);
      return 1;
    }
    out.stderr(`run ${started.runId} (fork of ${parent})`);
    const flags = { data: values.data, host };
    const settled = await followRun(engine, started.runId, out, { until: values.detach ? "park" : "end", logsFrom: 0, flags });
    if (settled?.status === "waiting") out.stdout(started.runId);
    return printSettled(out, started.runId, settled, flags, scriptPath);
  });
}
