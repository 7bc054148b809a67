import { parse, requireFlag, UsageError } from "../args.js";
import { readJsonFile, readTextFile, withEngine } from "../context.js";
import { formatDiagnostics, type Output } from "../print.js";

/** Type-checks a script against a toolset; nothing is written to the data folder. */
export async function checkCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { toolset: { type: "string" } });
  const [scriptPath] = positionals;
  if (!scriptPath) throw new UsageError("missing <script.ts>");
  const toolsetPath = requireFlag(values.toolset, "toolset");
  const spec = readJsonFile(toolsetPath, "toolset file");
  const source = readTextFile(scriptPath, "script");
  // A private in-memory store: checking writes nothing to the data folder.
  return withEngine(
    values.data,
    undefined,
    async (engine) => {
      const { id } = await engine.registerToolset(spec);
      const result = await engine.check(source, id);
      if (result.diagnostics.length > 0) out.stderr(formatDiagnostics(result.diagnostics, scriptPath));
      const errors = result.diagnostics.filter((d) => d.category === "error").length;
      if (result.ok) out.stdout(`ok: ${scriptPath} type-checks against ${toolsetPath}`);
      else out.stderr(`${scriptPath}: ${errors} error${errors === 1 ? "" : "s"} against ${toolsetPath}`);
      return result.ok ? 0 : 1;
    },
    { store: "memory:" },
  );
}
