import type { JsonValue } from "@tapedeck/protocol";
import { optionalFlag, parse, requireFlag, UsageError } from "../args.js";
import { withEngine, parseJsonFlag, readJsonFile, readTextFile } from "../context.js";
import { followRun, printSettled } from "../follow-run.js";
import { formatDiagnostics, type Output } from "../print.js";

/**
 * Registers the toolset, runs the script to its end, prints the output (stdout) or the error
 * (stderr), then the run's id (stderr; with the `fork` command that fixes a failed run). A run
 * that parks is kept here and woken at its timers; with `--detach` the command returns as it
 * first parks, printing the run's id (stdout) and what it waits for (stderr). Creates the data
 * folder if needed.
 */
export async function runCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    toolset: { type: "string" },
    host: { type: "string" },
    input: { type: "string" },
    detach: { type: "boolean" },
  });
  const [scriptPath] = positionals;
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const spec = readJsonFile(requireFlag(values.toolset, "toolset"), "toolset file");
  const source = readTextFile(scriptPath, "script");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  const host = optionalFlag(values.host, "host");
  return withEngine(
    values.data,
    host,
    async (engine) => {
      const { id } = await engine.registerToolset(spec);
      const started = await engine.start({ toolset: id, source, ...(input === undefined ? {} : { input }) });
      if (started.kind === "refused") {
        out.stderr(formatDiagnostics(started.diagnostics, scriptPath));
        out.stderr(`${scriptPath} does not type-check: no run was started.`);
        return 1;
      }
      const flags = { data: values.data, host };
      const settled = await followRun(engine, started.runId, out, { until: values.detach ? "park" : "end", logsFrom: 0, flags });
      if (settled?.status === "waiting") out.stdout(started.runId);
      return printSettled(out, started.runId, settled, flags, scriptPath);
    },
    {},
    "create",
  );
}
