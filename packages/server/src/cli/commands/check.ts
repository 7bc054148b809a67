import { SqliteStore } from "@tapedeck/engine";
import { parse, requireFlag, UsageError } from "../args.js";
import { readJsonFile, readTextFile, withEngine } from "../context.js";
import { formatDiagnostics, type Output } from "../print.js";

export const checkUsage = "tapedeck check <script.ts> --toolset <file>";

/** Type-checks a script against a toolset; nothing is written to the data folder. */
export async function checkCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { toolset: { type: "string" } });
  const [scriptPath] = positionals;
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const spec = readJsonFile(requireFlag(values.toolset, "toolset"), "toolset file");
  const source = readTextFile(scriptPath, "script");
  // A private in-memory store: checking writes nothing to the data folder.
  return withEngine(values.data, undefined, async (engine) => {
    const { id } = await engine.registerToolset(spec);
    const result = await engine.check(source, id);
    if (result.diagnostics.length > 0) out.stderr(formatDiagnostics(result.diagnostics));
    if (result.ok) out.stdout("ok: the script type-checks");
    return result.ok ? 0 : 1;
  }, { store: SqliteStore.open({ path: ":memory:" }) });
}
