import { toolFailure, type ToolFailure } from "@tapedeck/protocol";
import { LIMIT_EXCEEDED } from "./user-tool-runner.js";

/**
 * How deep user tools invoking user tools may nest. Every level is a fresh sandbox within the
 * call of the one above (its deadline included), each counting its own invocations against its
 * `toolCalls`; a cycle (a invokes b invokes a) is legal code, so it is bounded here at run time
 * rather than refused at registration, and ends with an error naming the chain.
 *
 * Invariant: the chain is the user tools' paths, outermost (the one the script called) first;
 * it holds at most `MAX_USER_TOOL_NESTING` tools, the one being invoked included.
 */

/** User tools in one chain of invocations, the one a script (or a direct session) called included. */
export const MAX_USER_TOOL_NESTING = 4;

/**
 * Invocations of other tools in one call's whole tree: the call a script made, and every user
 * tool it invokes at any level. Each tool's `limits.toolCalls` (20 by default) bounds its own;
 * without a bound on the tree, 4 levels of 20 would be 20⁴ = 160,000 sandboxes in one call (a
 * tree of 20 × 20 held `/health` for seconds). 100 lets a tool fan out fully one level (20) and
 * each tool it invokes make a few more. Where concurrent branches meet the bound depends on their
 * timing; the refusal is recorded as that invocation's answer, so a replay gets the same.
 */
export const MAX_TREE_INVOCATIONS = 100;

/** The failure that refuses one more invocation in the tree of `root`'s call once `MAX_TREE_INVOCATIONS` were made. */
export function treeBudgetRefusal(root: string, from: string, next: string): ToolFailure {
  return toolFailure(
    LIMIT_EXCEEDED,
    `${from} → ${next}: the call of ${root} made ${MAX_TREE_INVOCATIONS} invocations of other tools in all, across every user tool it invokes at every level, ` +
      "the limit of one call's tree; invoke fewer tools per level, or call them from the script.",
  );
}

/** The failure that refuses invoking `next` from the innermost tool of `chain`, or undefined when it nests within the limit. */
export function nestingRefusal(chain: readonly string[], next: string): ToolFailure | undefined {
  if (chain.length < MAX_USER_TOOL_NESTING) return undefined;
  const path = [...chain, next].join(" → ");
  const cycle = chain.includes(next)
    ? ` The chain is a cycle through ${next}: give it a base case that returns without invoking, or call the tools from the script.`
    : "";
  return toolFailure(
    LIMIT_EXCEEDED,
    `${path}: user tools invoking user tools nest at most ${MAX_USER_TOOL_NESTING} deep, and ${next} would be number ${chain.length + 1}.${cycle}`,
  );
}
