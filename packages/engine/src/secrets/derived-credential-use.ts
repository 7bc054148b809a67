import type { JsonValue, PinnedTool, PinnedToolset, UserToolHttpGrant } from "@tapedeck/protocol";
import { isAllowedHost } from "../net/allow-list.js";
import { canonicalJson } from "../util/canonical-json.js";

/**
 * What a credential set on a toolset may be used for in a toolset derived from it (issue 23
 * item 6). A credential set on toolset `T` (for every run of `T`, or for one end user's) applies
 * to the toolsets derived from `T` — a saved workflow's, a saved tool's, a toolset file with
 * `base` — so that they keep working. But whoever derives (a model through `save_tool`, another
 * tenant: an operator's toolset is in every tenant's reach) must not gain a use of it that `T`'s own tools did not have,
 * or `T`'s credential would be sent where its owner never agreed to send it.
 *
 * The rule, per credential `C` set on `T` and used in a run of a toolset derived from `T`:
 * - a user tool's `fetch` may send `C` only if that tool is one of `T`'s own (the same group,
 *   name, code, grants and limits), or if every HTTP grant it has is within the HTTP grant of one
 *   of `T`'s own user tools that are granted `C`: the same host (or a host under its wildcard), a
 *   path prefix at or under its prefix, methods among its methods. Since a user tool's requests
 *   are checked against its grants before any credential is resolved, `C` then goes only where
 *   `T`'s own tools could send it;
 * - a script's `http.fetch` may send `C` only if `T` has `http.fetch` and allows the host;
 * - a credential set on the run's own toolset, or for the run, is its owner's choice for exactly
 *   that toolset or run: it is used as set. So the owner allows a derived tool to use `C` by
 *   setting `C` on the derived toolset (or for the run).
 */

/** Who would send a credential. */
export type CredentialUse =
  /** A script's `http.fetch` of the run's toolset. */
  | { readonly kind: "http" }
  /** A user tool's `fetch`: the tool, as the run's toolset pins it. */
  | { readonly kind: "user"; readonly tool: PinnedTool };

/**
 * Why `use` may not send the credential `name`, set on `owner` (a toolset the run's toolset
 * derives from) and bound to `host`; undefined when `owner`'s own tools have that use.
 */
export function derivedUseProblem(owner: PinnedToolset, name: string, host: string, use: CredentialUse): string | undefined {
  if (use.kind === "http") {
    const fetchTool = owner.tools.find((tool) => tool.source === "builtin" && tool.group === "http" && tool.name === "fetch");
    if (fetchTool !== undefined && isAllowedHost(host, fetchTool.http?.allow ?? [])) return undefined;
    return refusal(owner, name, `a script's fetch to ${host}`, usesOf(owner, name));
  }
  const { tool } = use;
  if (owner.tools.some((own) => isSameUserTool(own, tool))) return undefined;
  const uses = usesOf(owner, name);
  const grants = tool.user?.grants.http ?? [];
  if (grants.length > 0 && grants.every((grant) => uses.some((own) => within(grant, own)))) return undefined;
  return refusal(owner, name, `${tool.group}.${tool.name}, a tool ${owner.id} does not have, granted ${describe(grants)}`, uses);
}

/** The HTTP grants of `owner`'s own user tools that are granted `name`. */
export function usesOf(owner: PinnedToolset, name: string): readonly UserToolHttpGrant[] {
  return owner.tools.filter((tool) => tool.user?.grants.secrets?.includes(name) === true).flatMap((tool) => tool.user!.grants.http ?? []);
}

/** Whether `grant` reaches nothing `own` does not (both normalised: prefixes end with `/`, methods upper case). */
export function within(grant: UserToolHttpGrant, own: UserToolHttpGrant): boolean {
  const methods = own.methods ?? ["GET"];
  return (
    hostWithin(grant.host, own.host) &&
    (grant.pathPrefix ?? "/").startsWith(own.pathPrefix ?? "/") &&
    (grant.methods ?? ["GET"]).every((m) => methods.includes(m))
  );
}

function hostWithin(host: string, own: string): boolean {
  if (host === own) return true;
  if (!own.startsWith("*.")) return false;
  // A wildcard is within a wildcard it narrows (`*.a.example.com` within `*.example.com`).
  return host.startsWith("*.") ? host.slice(1).endsWith(own.slice(1)) : isAllowedHost(host, [own]);
}

function isSameUserTool(own: PinnedTool, tool: PinnedTool): boolean {
  return (
    own.source === "user" &&
    own.group === tool.group &&
    own.name === tool.name &&
    canonicalJson(own.user as unknown as JsonValue) === canonicalJson(tool.user as unknown as JsonValue)
  );
}

export function describe(grants: readonly UserToolHttpGrant[]): string {
  return grants.length === 0 ? "nothing" : grants.map((grant) => `${(grant.methods ?? ["GET"]).join("|")} ${grant.host}${grant.pathPrefix ?? "/"}`).join(", ");
}

function refusal(owner: PinnedToolset, name: string, what: string, uses: readonly UserToolHttpGrant[]): string {
  return (
    `The credential ${name} is set on the toolset ${owner.id}, which this toolset derives from, and ${what} is not one of that toolset's own uses of it ` +
    `(its tools send ${name} to ${describe(uses)}), so nothing was sent. A derived toolset uses its base's credentials only as the base's own tools do: ` +
    `to let it use ${name} otherwise, the credential's owner sets ${name} on the derived toolset itself (or for the run).`
  );
}
