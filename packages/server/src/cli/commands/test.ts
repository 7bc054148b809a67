import type { JsonValue } from "@tapedeck/protocol";
import { formatDuration, type TestCall, type TestResult } from "@tapedeck/engine";
import { formatRunError } from "@tapedeck/protocol";
import { noExtraArguments, optionalFlag, parse, requireFlag, UsageError } from "../args.js";
import { parseJsonFlag, readJsonFile, readTextFile, withEngine } from "../context.js";
import { isDataFolder } from "../data-folder.js";
import { formatDiagnostics, short, type Output } from "../print.js";

/**
 * `test_script` from the command line: runs the script against a scenario (or a cassette) in
 * virtual time; nothing is sent to a tool and no run is written to the data folder (which is
 * read only for a scenario's `from_run`, and never created). Exit 0 when the script completes, 1 when it fails,
 * does not type-check, or is left waiting for something the scenario does not bring.
 */
export async function testCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    toolset: { type: "string" },
    scenario: { type: "string" },
    input: { type: "string" },
    host: { type: "string" },
    json: { type: "boolean" },
  });
  const [scriptPath] = positionals;
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  noExtraArguments(positionals, 1);
  const spec = readJsonFile(requireFlag(values.toolset, "toolset"), "toolset file");
  const source = readTextFile(scriptPath, "script");
  const scenarioPath = optionalFlag(values.scenario, "scenario");
  const scenario = scenarioPath === undefined ? undefined : readJsonFile(scenarioPath, "scenario");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  // The data folder is read for a scenario's `from_run` only; without one, nothing needs it.
  const fromRun = typeof scenario === "object" && scenario !== null && "from_run" in scenario;
  const store = fromRun || isDataFolder(values.data) ? {} : { store: "memory:" };
  return withEngine(
    values.data,
    optionalFlag(values.host, "host"),
    async (engine) => {
      const { id } = await engine.registerToolset(spec);
      const result = await engine.test({ toolset: id, source, ...(scenario === undefined ? {} : { scenario }), ...(input === undefined ? {} : { input }) });
      if (values.json === true) out.stdout(JSON.stringify(result, null, 2));
      else printReport(out, result, scriptPath);
      return result.kind === "tested" && result.status === "completed" ? 0 : 1;
    },
    store,
  );
}

function printReport(out: Output, result: TestResult, scriptPath: string): void {
  if (result.kind === "refused") {
    out.stderr(formatDiagnostics(result.diagnostics, scriptPath));
    return;
  }
  for (const call of result.calls) out.stderr(formatCall(call));
  for (const log of result.logs) out.stderr(`${virtual(log.atMs).padStart(12)}  [${log.level}] ${log.message}`);
  out.stderr(`virtual duration: ${virtual(result.virtualMs)}`);
  if (result.status === "completed") out.stdout(JSON.stringify(result.output, null, 2));
  else if (result.status === "failed" && result.error) out.stderr(formatRunError(result.error));
  else if (result.status === "waiting")
    out.stderr(
      `the test ended waiting for: ${(result.waits ?? []).map((w) => `#${w.seq} ${w.kind}${"name" in w ? ` "${w.name}"` : ""}${"tool" in w ? ` ${w.tool}` : ""}`).join(", ")} — add it to the scenario`,
    );
  else out.stderr(`the test run ended ${result.status}`);
}

function formatCall(call: TestCall): string {
  const outcome = call.error ? `✗ ${call.error.code}: ${call.error.message}` : call.endedAtMs === undefined ? "(open)" : `→ ${short(call.result)}`;
  const decided = call.decision ? ` [${call.decision}]` : "";
  return `${virtual(call.atMs).padStart(12)}  #${call.seq} ${call.tool}(${short(call.args, 80)}) ${call.answeredBy}${decided} ${outcome}`;
}

/** Virtual ms as "+1d 2h", "+350ms". */
function virtual(ms: number): string {
  return `+${formatDuration(ms)}`;
}
