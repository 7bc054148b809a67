/**
 * The grants a harness lets its model give the tools it saves (`agentTools({ toolGrants })`),
 * and what a `save_tool` asks for beyond them. Anything beyond the ceiling needs a human's
 * approval first (`toolGrants.approve`); without an approver it is refused, saying what to
 * narrow. The check is on the grants as written, the way the engine normalises them: hosts
 * lower case, path prefixes by whole segments, methods upper case (GET when none).
 */
import type { UserToolGrantsSpec, UserToolHttpGrant } from "@tapedeck/protocol";

/** What the model may grant without asking (`agentTools({ toolGrants })`). */
export interface ToolGrantsOptions {
  /** The widest grants a saved tool may have without approval. Default: none (any grant asks). */
  readonly ceiling?: UserToolGrantsSpec;
  /**
   * Asked when a `save_tool` goes beyond the ceiling, with the tool and what is beyond it: true
   * saves it, false refuses it (the model is told a human declined). Absent: such a save is refused.
   */
  readonly approve?: (request: ToolGrantRequest) => Promise<boolean> | boolean;
}

/** A `save_tool` that asks for more than the ceiling. */
export interface ToolGrantRequest {
  readonly group: string;
  readonly name: string;
  readonly description: string;
  readonly grants: UserToolGrantsSpec;
  /** Each grant beyond the ceiling, in words. */
  readonly beyond: readonly string[];
}

/** Each part of `grants` that `ceiling` does not cover, in words (empty when it covers all). */
export function beyondCeiling(grants: UserToolGrantsSpec, ceiling: UserToolGrantsSpec = {}): string[] {
  const beyond: string[] = [];
  for (const grant of grants.http ?? []) {
    const methods = methodsOf(grant);
    const covered = (ceiling.http ?? []).some(
      (top) => hostCovers(top.host, grant.host) && under(prefixOf(grant), prefixOf(top)) && methods.every((m) => methodsOf(top).includes(m)),
    );
    if (!covered) beyond.push(`http ${methods.join("|")} ${grant.host.toLowerCase()}${prefixOf(grant)}`);
  }
  for (const name of grants.secrets ?? []) if (!(ceiling.secrets ?? []).includes(name)) beyond.push(`the secret ${name}`);
  if (grants.workspace !== undefined && !(ceiling.workspace === "rw" || ceiling.workspace === grants.workspace))
    beyond.push(`the workspace (${grants.workspace})`);
  for (const name of grants.tools ?? []) if (!(ceiling.tools ?? []).includes(name)) beyond.push(`the tool ${name}`);
  return beyond;
}

function methodsOf(grant: UserToolHttpGrant): string[] {
  return (grant.methods ?? ["GET"]).map((method) => method.toUpperCase());
}

function prefixOf(grant: UserToolHttpGrant): string {
  const prefix = grant.pathPrefix ?? "/";
  return prefix.endsWith("/") ? prefix : `${prefix}/`;
}

function under(prefix: string, top: string): boolean {
  return prefix.startsWith(top);
}

/** Whether the ceiling's host pattern covers the grant's (`*.example.com` covers `api.example.com` and itself). */
function hostCovers(top: string, host: string): boolean {
  const a = top.toLowerCase();
  const b = host.toLowerCase();
  if (a === b) return true;
  if (!a.startsWith("*.")) return false;
  const rest = b.split(".").slice(1).join(".");
  return !b.startsWith("*.") && rest === a.slice(2);
}
