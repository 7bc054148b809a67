import { parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import type { Output } from "../print.js";

/**
 * Replays a run's journal in a fresh sandbox without sending a call or writing anything, and
 * says whether the script still does what was recorded (for instance before an upgrade).
 */
export async function verifyCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  return withEngine(values.data, undefined, async (engine) => {
    const result = await engine.verify(runId);
    if (!result.ok) {
      out.stderr(`does not replay: ${result.problem}`);
      return 1;
    }
    out.stdout(result.end ? `replays: the script ends ${result.end.status} as recorded` : "replays: the journal's calls match (the run has not ended)");
    return 0;
  });
}
