import { writeFileSync } from "node:fs";
import { noExtraArguments, optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import type { Output } from "../print.js";

/**
 * Exports a run's recorded calls, received signals and decisions as a cassette: a scenario
 * document that `tapedeck test --scenario <file>` replays without sending anything. The
 * journal holds no credential, so neither does the cassette.
 */
export async function cassetteCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { out: { type: "string" } });
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  noExtraArguments(positionals, 1);
  const path = optionalFlag(values.out, "out");
  return withEngine(values.data, undefined, async (engine) => {
    const text = JSON.stringify(await engine.cassette(runId), null, 2);
    if (path === undefined) {
      out.stdout(text);
    } else {
      writeFileSync(path, `${text}\n`);
      out.stderr(`wrote the cassette of ${runId} to ${path}`);
    }
    return 0;
  });
}
