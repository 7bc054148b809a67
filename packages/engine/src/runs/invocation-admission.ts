import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { Store } from "../store/store.js";
import { callApproval } from "./call-approval.js";
import { admitCall } from "./rate-gate.js";

/**
 * A user tool's call of another tool meets that tool's policy as a script's call would: its
 * approval rules (deny refuses; ask refuses too, since a user tool cannot wait for a person) and
 * its rate limit (counted in the same window; over it, refused — it cannot wait either).
 */
export async function admitInvocation(
  call: { readonly tool: PinnedTool; readonly path: string; readonly args: JsonValue; readonly namespace: string | undefined },
  store: Store,
  clock: Clock,
): Promise<ToolFailure | undefined> {
  const approval = callApproval(call.tool, call.path, call.args, false);
  if (approval.kind === "deny") return approval.failure;
  if (approval.kind === "ask")
    return toolFailure(
      "refused",
      `${call.path} asks for approval of this call${approval.reason === undefined ? "" : ` (${approval.reason})`}, and a user tool cannot wait for one; call ${call.path} from the script instead.`,
    );
  const rate = await admitCall(store.rateLimits, call.tool, call.path, call.namespace, clock.now());
  return rate.ok ? undefined : rate.failure;
}
