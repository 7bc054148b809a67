import { formatRunError } from "@tapedeck/protocol";
import { Engine } from "@tapedeck/engine";
import { parse, UsageError } from "../args.js";
import { formatEntry, type Output } from "../print.js";

export const showUsage = "tapedeck show <run_id> [--data <dir>]";

/** Prints a run's state and its whole journal. */
export async function showCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  const engine = await Engine.open({ dataDir: values.data });
  try {
    const run = await engine.getRun(runId);
    out.stdout(`run      ${run.id}`);
    out.stdout(`status   ${run.status}`);
    out.stdout(`toolset  ${run.toolsetId}`);
    out.stdout(`created  ${new Date(run.createdAt).toISOString()}`);
    if (run.output !== undefined) out.stdout(`output   ${JSON.stringify(run.output)}`);
    if (run.error) out.stdout(`error    ${formatRunError(run.error).split("\n").join("\n         ")}`);
    out.stdout("journal");
    for (let from = 0; ; ) {
      const page = await engine.journal(runId, from, 1000);
      for (const entry of page) out.stdout(formatEntry(entry));
      if (page.length < 1000) break;
      from += page.length;
    }
    return 0;
  } finally {
    await engine.close();
  }
}
