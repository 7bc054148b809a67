import type { JsonValue } from "@tapedeck/protocol";
import { judgedArgs } from "../library/judged-args.js";
import type { LibraryTool } from "../library/library-tool.js";
import { decideApproval } from "../toolset/approval.js";

/**
 * A user tool granted the workspace writes through the files tools' own code, and meets their
 * own approval rules too (`files.write` asks for git internals, CI workflows, shell scripts and
 * env files), judged on the path the workspace writes (`judgedArgs`). A user tool cannot wait for
 * a person within its call, so what the rules ask for (or deny) is refused, saying what to do:
 * otherwise a tool saved with `workspace: "rw"` would write `.env` or `.github/workflows/ci.yml`
 * that `files.write` asks approval for.
 */
export function workspaceRuleRefusal(name: string, library: LibraryTool<"workspace">, args: JsonValue): string | undefined {
  const decided = decideApproval(library.approval, { tool: `workspace.${name}`, args: judgedArgs({ source: "library", group: "files", name }, args) });
  if (decided.kind === "send") return undefined;
  return `workspace.${name} is refused: ${decided.reason}, which asks for a person's approval, and a user tool cannot wait for one. Nothing was written; write it with files.${name} from the script, which asks.`;
}
