import { parse, UsageError } from "../args.js";
import { withEngine, readJsonFile } from "../context.js";
import type { Output } from "../print.js";

/** Registers a toolset: prints its id, then its declarations (TypeScript, then the prompt form). Creates the data folder if needed. */
export async function toolsetCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [verb, file] = positionals;
  if (verb !== "register") throw new UsageError(`unknown toolset command "${verb ?? ""}"`);
  if (!file) throw new UsageError("missing <file>");
  const spec = readJsonFile(file, "toolset file");
  return withEngine(
    values.data,
    undefined,
    async (engine) => {
      const registered = await engine.registerToolset(spec);
      out.stdout(registered.id);
      out.stdout("");
      out.stdout(registered.declarations.typescript);
      out.stdout(registered.declarations.prompt);
      return 0;
    },
    {},
    "create",
  );
}
