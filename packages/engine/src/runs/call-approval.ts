import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";
import { judgedArgs } from "../library/judged-args.js";
import { decideApproval } from "../toolset/approval.js";

/**
 * Whether a call waits for a person, from its tool's pinned policy: `approval: true` asks every
 * call; `approvalRules` (the one tool contract's approval as data, a library tool's own or the
 * toolset's policy entry) decide from the call's arguments, each with the reason the approver is
 * shown, and may refuse it outright (`deny`). Pure: the same call gets the same answer live and
 * when its journal is resumed, so the reason need not be journaled. The rules see the arguments
 * as the tool will act on them (`judgedArgs`: a files tool's paths normalised).
 */

export type CallApproval =
  /** Sent without asking. */
  | { readonly kind: "send" }
  /** Waits for a decision; `reason`: why, when the tool's rules say. */
  | { readonly kind: "ask"; readonly reason?: string }
  /** Refused without asking: the script gets `failure`. */
  | { readonly kind: "deny"; readonly failure: ToolFailure };

export function callApproval(tool: PinnedTool, path: string, args: JsonValue, asks: boolean): CallApproval {
  const rules = tool.policy.approvalRules;
  if (rules === undefined) return tool.policy.approval || asks ? { kind: "ask" } : { kind: "send" };
  const decided = decideApproval(rules, { tool: path, args: judgedArgs(tool, args) });
  if (decided.kind === "deny")
    return { kind: "deny", failure: toolFailure("refused", `${path} is refused by its approval rules: ${decided.reason}. Nothing was sent.`) };
  if (decided.kind === "ask") return { kind: "ask", reason: decided.reason };
  return tool.policy.approval || asks ? { kind: "ask" } : { kind: "send" };
}
