import { formatRunError } from "@tapedeck/protocol";
import { noExtraArguments, optionalFlag, parse, UsageError } from "../args.js";
import { journalEntries, withEngine } from "../context.js";
import { formatEntry, type Output } from "../print.js";
import { describeWait } from "../print-waits.js";

/** Prints a run's state (with what it waits for) and its whole journal; with `--follow`, live from a running server until the run ends. */
export async function showCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { follow: { type: "boolean" }, url: { type: "string" } });
  if (values.follow === true) {
    // Live from a running server, as `runs follow` prints it: the data folder is the server's while it runs.
    const url = optionalFlag(values.url, "url");
    return (await import("./runs-follow.js")).runsFollowCommand([...positionals, ...(url === undefined ? [] : ["--url", url])], out);
  }
  if (values.url !== undefined) throw new UsageError("--url goes with --follow (a running server); without it, show reads the data folder");
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
