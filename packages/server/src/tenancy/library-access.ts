import { libraryDataTools } from "@tapedeck/engine";
import type { PinnedToolset } from "@tapedeck/protocol";
import type { Permission } from "./permission.js";

/**
 * Who may run tools that reach the library's kept data: a namespace's workspace (files, shell, a
 * user tool granted `workspace`) and its memory. The library keeps that data per namespace (an end
 * user), and every run or session without a namespace shares one space, the operator's.
 *
 * A key limited only by labels acts as no end user (`end-user-access.ts`): its runs have no
 * namespace. Letting it use that shared space would let two such keys (team=red, team=blue) read
 * each other's files and memory, and the operator's. Keying the space by labels instead would not
 * fit what labels are: runs carry labels of their own (a conversation, an agent), so a workspace
 * per label set would split one tenant's data across its conversations, and which labels came from
 * the key is not recorded on the run. So such a key may use the library's data tools only inside a
 * namespace, which it cannot reach: it is refused them, saying what to use instead. Everything else
 * in the toolset (http, json, host tools…) stays open to it.
 *
 * Checked wherever new calls could reach that space for the caller: starting or forking a run,
 * binding a direct session and calling a tool in one (a session an operator placed in the key's
 * labels included).
 */
/** Whether `mayReachLibraryData` can refuse this caller here, so that the toolsets are loaded only then. */
export function libraryLimited(actor: { readonly operator: boolean }, namespace: string | undefined): boolean {
  return namespace === undefined && !actor.operator;
}

export function mayReachLibraryData(
  actor: { readonly operator: boolean; readonly endUser?: string },
  namespace: string | undefined,
  toolsets: readonly PinnedToolset[],
  action: string,
): Permission {
  if (!libraryLimited(actor, namespace)) return { ok: true };
  const tools = [...new Set(toolsets.flatMap((toolset) => libraryDataTools(toolset.tools)))];
  if (tools.length === 0) return { ok: true };
  const named = tools.length > 3 ? `${tools.slice(0, 3).join(", ")} and ${tools.length - 3} more` : tools.join(", ");
  return {
    ok: false,
    reason:
      `This key is limited to labels, not to a namespace, so it cannot use the toolset's ${named}: ${action} would reach the workspace and memory ` +
      "that every run without a namespace shares (the library keeps them per end user). Use a key or token limited to a namespace " +
      "(tapedeck keys create --namespace <end user>, or POST /v1/tokens with an unlimited key), or a toolset without the files, shell and memory groups and without workspace grants.",
  };
}
