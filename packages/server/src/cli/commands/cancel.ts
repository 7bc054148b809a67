import { optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import type { Output } from "../print.js";

/** Cancels a run that has not ended. A run that has ended is left as it is. */
export async function cancelCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { reason: { type: "string" } });
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  return withEngine(values.data, undefined, async (engine) => {
    const end = await engine.cancel(runId, optionalFlag(values.reason, "reason") ?? "cancelled from the command line");
    out.stdout(end.status === "cancelled" ? `${runId} cancelled` : `${runId} had already ended: ${end.status}`);
    return end.status === "cancelled" ? 0 : 1;
  });
}
