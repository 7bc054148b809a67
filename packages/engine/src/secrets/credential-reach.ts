/**
 * Where a toolset can send a vault credential, so that whoever sets one hears at once when it
 * would never be sent (a host spelled differently from the toolset's allow-list, say): the
 * hosts its `fetch` allows, and the hosts of its Streamable HTTP MCP servers that name the
 * credential. Host patterns on both sides are normalised allow-list entries
 * (`api.github.com`, `*.example.com`, an IP literal).
 */
import type { PinnedToolset } from "@tapedeck/protocol";
import { isAllowedHost, stripTrailingDot } from "../net/allow-list.js";

export type CredentialReach =
  /** One of the credential's hosts is a host the toolset sends requests to. */
  | { readonly kind: "reached" }
  /** None is: the credential is never sent for this toolset's runs. `destinations`: where it could be (empty: the toolset makes no HTTP requests). */
  | { readonly kind: "unreached"; readonly destinations: readonly string[] };

/** Whether a credential `name` bound to `hosts` can be sent by runs of `toolset`. */
export function credentialReach(toolset: PinnedToolset, credential: { readonly name: string; readonly hosts: readonly string[] }): CredentialReach {
  const destinations = [...new Set([...allowedHosts(toolset), ...mcpHosts(toolset, credential.name)])].sort();
  const reached = destinations.some((destination) => credential.hosts.some((host) => overlap(host, destination)));
  return reached ? { kind: "reached" } : { kind: "unreached", destinations };
}

/** The `fetch` allow-list (the built-in `http.fetch` tool's). */
function allowedHosts(toolset: PinnedToolset): readonly string[] {
  return toolset.tools.find((tool) => tool.http !== undefined)?.http?.allow ?? [];
}

/** The hosts of the MCP servers that send the credential `name` on every call. */
function mcpHosts(toolset: PinnedToolset, name: string): string[] {
  const hosts: string[] = [];
  for (const recipe of Object.values(toolset.servers ?? {})) {
    if (!("url" in recipe) || recipe.credential !== name) continue;
    try {
      hosts.push(stripTrailingDot(new URL(recipe.url).hostname));
    } catch {
      // A URL the registration accepted parses; nothing to add otherwise.
    }
  }
  return hosts;
}

/** Whether two host patterns match a common host. */
function overlap(a: string, b: string): boolean {
  if (a === b) return true;
  const aWild = a.startsWith("*.");
  const bWild = b.startsWith("*.");
  if (aWild && bWild) return false;
  return aWild ? isAllowedHost(b, [a]) : bWild ? isAllowedHost(a, [b]) : false;
}
