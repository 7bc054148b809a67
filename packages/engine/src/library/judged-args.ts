import type { JsonValue, PinnedTool } from "@tapedeck/protocol";
import { patchApprovalView, writeApprovalView } from "./files/files-approval-view.js";

/**
 * The arguments of a call as approval rules see them (the pinned rules at call intake, a direct
 * session's policy): a library tool that acts on a normalised form of an argument (a path) is
 * judged on that form, so no spelling of the same target escapes a rule. Other tools' arguments
 * are judged as written: their sources, not the engine, decide what a value means.
 */
const VIEWS: ReadonlyMap<string, (args: JsonValue) => JsonValue> = new Map([
  ["files.write", writeApprovalView],
  ["files.patch", patchApprovalView],
]);

export function judgedArgs(tool: Pick<PinnedTool, "source" | "group" | "name">, args: JsonValue): JsonValue {
  if (tool.source !== "library") return args;
  const view = VIEWS.get(`${tool.group}.${tool.name}`);
  return view === undefined ? args : view(args);
}
