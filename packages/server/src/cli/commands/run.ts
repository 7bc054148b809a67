import type { JsonValue } from "@tapedeck/protocol";
import { optionalFlag, parse, requireFlag, UsageError } from "../args.js";
import { withEngine, parseJsonFlag, readJsonFile, readTextFile } from "../context.js";
import { formatDiagnostics, printEnd, type Output } from "../print.js";
import { printLogs } from "./logs.js";

export const runUsage = "tapedeck run <script.ts> --toolset <file> [--host <module>] [--input <json>] [--data <dir>]";

/** Registers the toolset, runs the script to its end, prints the output (stdout) or the error (stderr). */
export async function runCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    toolset: { type: "string" },
    host: { type: "string" },
    input: { type: "string" },
  });
  const [scriptPath] = positionals;
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const spec = readJsonFile(requireFlag(values.toolset, "toolset"), "toolset file");
  const source = readTextFile(scriptPath, "script");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  return withEngine(values.data, optionalFlag(values.host, "host"), async (engine) => {
    const { id } = await engine.registerToolset(spec);
    const started = await engine.start({ toolset: id, source, ...(input === undefined ? {} : { input }) });
    if (started.kind === "refused") {
      out.stderr(formatDiagnostics(started.diagnostics));
      return 1;
    }
    const end = await started.end;
    await printLogs(engine, started.runId, out);
    return printEnd(out, end);
  });
}
