import type { PinnedTool } from "@tapedeck/protocol";
import { derivedUseProblem } from "../secrets/derived-credential-use.js";
import { toolsetChain } from "../secrets/toolset-chain.js";
import type { CredentialVault } from "../secrets/vault.js";
import type { Store } from "../store/store.js";

/**
 * The credentials a tool about to be saved on toolset `baseId` is granted beyond what they are
 * set for: each credential it names that is set on `baseId` or a toolset it derives from (for
 * every run, or for an end user) is refused unless those toolsets' own tools use it as widely
 * (`secrets/derived-credential-use.ts`). Said at saving, so the model (or tenant) hears at once
 * that the grant would never be honoured; the resolver refuses the same use at call time, for a
 * credential set later too.
 */
export async function savedToolCredentialProblems(tool: PinnedTool, baseId: string, store: Store, vault: CredentialVault): Promise<readonly string[]> {
  const names = tool.user?.grants.secrets ?? [];
  if (names.length === 0) return [];
  const chain = new Set(await toolsetChain(store, baseId));
  const owners = new Map<string, Set<string>>();
  for (const info of await vault.list()) {
    if (info.scope.kind === "run" || !chain.has(info.scope.toolsetId) || !names.includes(info.name)) continue;
    owners.set(info.scope.toolsetId, (owners.get(info.scope.toolsetId) ?? new Set()).add(info.name));
  }
  const problems: string[] = [];
  for (const [toolsetId, credentials] of owners) {
    const owner = await store.getToolset(toolsetId);
    if (owner === undefined) continue;
    for (const name of [...credentials].sort()) {
      const problem = derivedUseProblem(owner, name, "", { kind: "user", tool });
      if (problem !== undefined) problems.push(`capabilities.secrets: ${problem.replace(", so nothing was sent", "")}`);
    }
  }
  return problems;
}
