import { formatRunError } from "@tapedeck/protocol";
import type { Run } from "@tapedeck/protocol/api";
import { noExtraArguments, optionalFlag, parse, UsageError } from "../args.js";
import { formatEntry, type Output } from "../print.js";
import { describeWait } from "../print-waits.js";

/**
 * Follows a run on a running server (`GET /v1/runs/:id/events`, through the SDK's `runs.follow`):
 * prints each journal entry as it is written and each change of its state, then how it ended.
 * Over HTTP, not the data folder: the run goes on in the server while this reads. The key is
 * read from `TAPEDECK_API_KEY` only, never a flag, so that it is not in the process list.
 * Exit code: 0 completed, 1 failed or cancelled, or a run missing or outside the key's scope.
 */
export async function runsFollowCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { url: { type: "string" } });
  const [runId] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  noExtraArguments(positionals, 1);
  const url = optionalFlag(values.url, "url") ?? process.env.TAPEDECK_URL;
  const apiKey = process.env.TAPEDECK_API_KEY;
  if (apiKey === undefined || apiKey === "") throw new UsageError("set TAPEDECK_API_KEY to an API key of the server (tapedeck keys create)");
  const { Tapedeck, TapedeckError } = await import("@tapedeck/sdk");
  const client = new Tapedeck({ apiKey, ...(url === undefined ? {} : { baseUrl: url }) });
  let state = "";
  let ended: Run;
  try {
    ended = await client.runs.follow(runId, {
      onEvent: (event) => {
        if (event.event === "entry") out.stdout(formatEntry(event.data));
        else if (event.event === "run") {
          // The state is printed when it changes, not at each reconnection that sends it again.
          const now = stateLine(event.data);
          if (now !== state) out.stdout(now);
          state = now;
        }
      },
    });
  } catch (error) {
    if (!TapedeckError.is(error)) throw error;
    out.stderr(`error: ${error.message}`);
    return 1;
  }
  if (ended.status === "completed") {
    out.stdout(`output   ${JSON.stringify(ended.output)}`);
    return 0;
  }
  if (ended.error) out.stderr(`error    ${formatRunError(ended.error).split("\n").join("\n         ")}`);
  else out.stderr(`status   ${ended.status}`);
  return 1;
}

function stateLine(run: Run): string {
  const waits = run.status === "waiting" && run.waits?.length ? `  waits for ${run.waits.map(describeWait).join("; ")}` : "";
  return `status   ${run.status}${waits}`;
}
