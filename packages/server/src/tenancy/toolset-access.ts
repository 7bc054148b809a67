import { unknownToolset, type Store, type ToolsetOwner } from "@tapedeck/engine";
import { sees, type Scope } from "./scope.js";

/**
 * Which toolsets a caller may reach (read, run, check, test, bind, derive from, hold
 * credentials for). A toolset registered through the server belongs to the scope of the key or
 * token that registered it (`ToolsetStore.putToolset`); one outside the caller's reach does not
 * exist for it: every route answers for it exactly as for an unknown id.
 *
 * A caller reaches a toolset when it is an operator (an unlimited API key, whatever namespace
 * header it sends), when the toolset has no owner (registered before owners were kept, or by the
 * engine's own callers: the CLI, an embedded engine), or when its scope and one owner's are
 * nested:
 * - the caller sees the owner's runs (`sees(caller, owner)`): alice's key reaches what alice's
 *   tokens registered;
 * - or the owner sees the caller's (`sees(owner, caller)`): alice's tokens reach what alice's key
 *   registered, and every caller reaches what an operator registered without a namespace (the
 *   unlimited scope sees every run), which is how an operator provides toolsets to its tenants.
 * Two scopes side by side (alice and bob, team=red and team=blue) never reach each other's.
 *
 * A toolset's id is a hash of its content: a tenant who registers the same content as another
 * gets the same id and is added to its owners. It learns nothing it did not send, except the
 * result shapes observed for the toolset's tools (keys and types, never values) in any owner's runs.
 */
export function reachesToolset(caller: { readonly operator: boolean; readonly scope: Scope }, owners: readonly ToolsetOwner[]): boolean {
  if (caller.operator || owners.length === 0) return true;
  return owners.some((owner) => sees(caller.scope, owner) || sees(owner, caller.scope));
}

/** The scope a toolset registered by this caller belongs to: its key's or token's, narrowed by the namespace header. */
export function ownerOf(caller: { readonly scope: Scope }): ToolsetOwner {
  const { namespace, labels } = caller.scope;
  return { ...(namespace === undefined ? {} : { namespace }), labels };
}

/** Whether the caller reaches toolset `id` (an unknown id has no owners: the engine then answers it as unknown). */
export async function mayReachToolset(
  store: Pick<Store, "getToolsetOwners">,
  caller: { readonly operator: boolean; readonly scope: Scope },
  id: string,
): Promise<boolean> {
  return caller.operator || reachesToolset(caller, await store.getToolsetOwners(id));
}

/** Throws the `not_found` of an unknown toolset for one the caller does not reach. */
export async function reachableToolset(
  store: Pick<Store, "getToolsetOwners">,
  caller: { readonly operator: boolean; readonly scope: Scope },
  id: string,
): Promise<void> {
  if (!(await mayReachToolset(store, caller, id))) throw unknownToolset(id);
}
