import { isSessionId } from "@tapedeck/engine";
import { noExtraArguments, parse } from "../args.js";
import { withEngine } from "../context.js";
import { short, type Output } from "../print.js";

/**
 * Lists the calls waiting for a decision (of one run or session, or of every run and direct tool
 * session, oldest first), one line each: its id (`<run_id>/<seq>`), tool and arguments, kind
 * (`approval` with its rule's reason if any, or `parked` with its reason; a session's: its summary and when it expires).
 * Listing never wakes or executes a run.
 */
export async function approvalsCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  noExtraArguments(positionals, 1);
  const [runId] = positionals;
  return withEngine(values.data, undefined, async (engine) => {
    const forRun = runId !== undefined && !isSessionId(runId);
    const pending = forRun ? await engine.pendingDecisions({ runId }) : (await engine.pendingDecisions({})).filter((call) => !isSessionId(call.runId));
    // Direct tool sessions' calls, with the approver's summary (their records are runs', listed above as such otherwise).
    const sessions = forRun ? [] : (await engine.direct.approvals({ labels: {} })).filter((call) => runId === undefined || call.sessionId === runId);
    if (pending.length === 0 && sessions.length === 0) {
      out.stderr("no calls are waiting for a decision");
      return 0;
    }
    for (const call of runId !== undefined && isSessionId(runId) ? [] : pending) {
      // An approval rule's reason says why this call asks (`call.reason`); a policy of `approval: true` gives none.
      const kind = call.kind === "parked" ? `parked (${call.reason}: ${call.message})` : call.reason === undefined ? "approval" : `approval: ${call.reason}`;
      out.stdout(`${call.id}  ${call.tool}(${short(call.args)})  ${kind}`);
    }
    for (const call of sessions) {
      out.stdout(
        `${call.id}  ${call.tool}(${short(call.args)})  session ${JSON.stringify(call.session)}: ${call.summary} (expires ${new Date(call.expiresAt).toISOString()})`,
      );
    }
    out.stderr("decide with: tapedeck approve <approval_id> | tapedeck reject <approval_id> --reason <text>");
    return 0;
  });
}
