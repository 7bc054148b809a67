import { formatRunError } from "@tapedeck/protocol";
import { noExtraArguments, parse, UsageError } from "../args.js";
import { journalEntries, withEngine } from "../context.js";
import { formatEntry, type Output } from "../print.js";
import { describeWait } from "../print-waits.js";

/** Prints a run's state (with what it waits for) and its whole journal. */
export async function showCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  noExtraArguments(positionals, 1);
  return withEngine(values.data, undefined, async (engine) => {
    const run = await engine.getRun(runId);
    out.stdout(`run      ${run.id}`);
    out.stdout(`status   ${run.status}`);
    out.stdout(`toolset  ${run.toolsetId}`);
    out.stdout(`created  ${new Date(run.createdAt).toISOString()}`);
    if (run.waits?.length) out.stdout(`waits    ${run.waits.map(describeWait).join("\n         ")}`);
    if (run.wakeAt !== undefined) out.stdout(`wakes    ${new Date(run.wakeAt).toISOString()}`);
    if (run.output !== undefined) out.stdout(`output   ${JSON.stringify(run.output)}`);
    if (run.error) out.stdout(`error    ${formatRunError(run.error).split("\n").join("\n         ")}`);
    out.stdout("journal");
    for await (const entry of journalEntries(engine, runId)) out.stdout(formatEntry(entry));
    return 0;
  });
}
