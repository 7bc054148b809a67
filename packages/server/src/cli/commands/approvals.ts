import { noExtraArguments, parse } from "../args.js";
import { withEngine } from "../context.js";
import { short, type Output } from "../print.js";

export const approvalsUsage = "tapedeck approvals [<run_id>] [--data <dir>]";

/**
 * Lists the calls waiting for a decision (of one run, or of every run, oldest run first), one
 * line each: its id (`<run_id>/<seq>`), tool and arguments, kind (`approval`, or `parked` with its reason).
 * Listing never wakes or executes a run.
 */
export async function approvalsCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  noExtraArguments(positionals, 1);
  const [runId] = positionals;
  return withEngine(values.data, undefined, async (engine) => {
    const pending = await engine.pendingDecisions(runId === undefined ? {} : { runId });
    if (pending.length === 0) {
      out.stderr("no calls are waiting for a decision");
      return 0;
    }
    for (const call of pending) {
      const kind = call.kind === "parked" ? `parked (${call.reason}: ${call.message})` : "approval";
      out.stdout(`${call.id}  ${call.tool}(${short(call.args)})  ${kind}`);
    }
    out.stderr("decide with: tapedeck approve <approval_id> | tapedeck reject <approval_id> --reason <text>");
    return 0;
  });
}
