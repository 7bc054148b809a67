import { isSessionId } from "@tapedeck/engine";
import type { Decision } from "@tapedeck/protocol";
import { noExtraArguments, optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import { followRun, printSettled } from "../follow-run.js";
import type { Output } from "../print.js";

/** Approves a call waiting for approval (or parked): it is sent with its key. */
export function approveCommand(args: readonly string[], out: Output): Promise<number> {
  return decide("approved", args, out);
}

/** Rejects a call waiting for approval (or parked): the script gets a `ToolError` (`approval_rejected`). */
export function rejectCommand(args: readonly string[], out: Output): Promise<number> {
  return decide("rejected", args, out);
}

/**
 * Journals the decision on call `<seq>` (as `tapedeck approvals` lists it); the run wakes in
 * this process and goes on until it ends (printed as `run` prints) or parks again.
 */
async function decide(decision: Decision, args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { reason: { type: "string" }, host: { type: "string" } });
  // An approval id (`<run_id>/<seq>`, as `tapedeck approvals` prints it) or the two apart.
  const [first, second] = positionals;
  if (!first) throw new UsageError("missing <approval_id> (or <run_id> <seq>)");
  const slash = first.lastIndexOf("/");
  const [runId, seqText] = second === undefined && slash > 0 ? [first.slice(0, slash), first.slice(slash + 1)] : [first, second];
  if (seqText === undefined) throw new UsageError("missing <seq> (or give the approval id <run_id>/<seq>)");
  if (!/^[1-9][0-9]*$/.test(seqText))
    throw new UsageError(`<seq> must be the number of the call, as tapedeck approvals lists it (a positive integer); got ${JSON.stringify(seqText)}`);
  noExtraArguments(positionals, second === undefined ? 1 : 2);
  const seq = Number(seqText);
  const reason = optionalFlag(values.reason, "reason");
  const host = optionalFlag(values.host, "host");
  return withEngine(values.data, host, async (engine) => {
    if (isSessionId(runId)) {
      // A direct tool session's call: the session (in the server that holds it, or here) sends it; the harness reads its result.
      const options = reason === undefined ? {} : { reason };
      const decided = decision === "approved" ? await engine.approve(runId, seq, options) : await engine.reject(runId, seq, options);
      if (decided.heldBy !== undefined)
        out.stderr(
          `${decision} call #${seq} of session ${runId}: the process that holds the session (${decided.heldBy}) journals the decision and sends the call`,
        );
      else if (decided.unsent !== undefined)
        out.stderr(
          `${decision} call #${seq} of session ${runId}: the decision is journaled; the call is sent by the process that next holds the session with its tools (the server, when the harness handles the call again), not by this one: ${decided.unsent}`,
        );
      else out.stderr(`${decision} call #${seq} of session ${runId}`);
      return 0;
    }
    const logsFrom = (await engine.getRun(runId)).journalLength;
    const options = reason === undefined ? {} : { reason };
    const decided = decision === "approved" ? await engine.approve(runId, seq, options) : await engine.reject(runId, seq, options);
    out.stderr(`${decision} call #${seq} of run ${runId}`);
    if (decided.heldBy !== undefined) {
      out.stderr(`run ${runId} is kept by another process (${decided.heldBy}), which journals the decision and goes on there`);
      return 0;
    }
    if (decided.unsent !== undefined) {
      // Run here, it would fail its host calls for want of their source: the run is left to a process that has them.
      out.stderr(
        `the decision is journaled; run ${runId} goes on in the next process that wakes it with its tools (a running tapedeck serve at once, or tapedeck resume ${runId} --host <module>), not in this one: ${decided.unsent}`,
      );
      return 0;
    }
    const flags = { data: values.data, host };
    return printSettled(out, runId, await followRun(engine, runId, out, { until: "park", logsFrom, flags }), flags);
  });
}
