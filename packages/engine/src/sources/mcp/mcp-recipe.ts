import type { McpServerRecipe, McpServerSpec } from "@tapedeck/protocol";
import { canonicalJson } from "../../util/canonical-json.js";
import { sha256Hex } from "../../util/ids.js";

/**
 * How to reach a server: the spec without its options. `addresses: "public"` (a toolset a
 * tenant registers) puts the public-address rule in a Streamable HTTP server's recipe, so its
 * id, its connections and the toolset's id are not the operator's.
 */
export function recipeOf(spec: McpServerSpec, addresses: "any" | "public" = "any"): McpServerRecipe {
  const info = spec.clientInfo ? { clientInfo: { name: spec.clientInfo.name, version: spec.clientInfo.version } } : {};
  const rule = addresses === "public" ? { addresses } : {};
  if ("url" in spec)
    return { url: spec.url, ...(spec.headers ? { headers: spec.headers } : {}), ...(spec.credential ? { credential: spec.credential } : {}), ...rule, ...info };
  return { command: spec.command, args: spec.args ?? [], ...(spec.env ? { env: spec.env } : {}), ...(spec.cwd ? { cwd: spec.cwd } : {}), ...info };
}

/** A recipe's id: `mcp_` + SHA-256 of its canonical JSON (env references, never secret values). */
export function recipeId(recipe: McpServerRecipe): string {
  return `mcp_${sha256Hex(canonicalJson(recipe as never)).slice(0, 32)}`;
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces `${VAR}` with the environment's value; a missing variable is an error that names it. */
export function expandReferences(values: Readonly<Record<string, string>> | undefined, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    out[key] = value.replace(REFERENCE, (_whole, name: string) => {
      const found = env[name];
      if (found === undefined) throw new Error(`${where}.${key} references \${${name}}, which is not set in Tapedeck's environment`);
      return found;
    });
  }
  return out;
}

/** The values `${VAR}` references in `values` expand to: secrets of Tapedeck's environment, to be redacted wherever the server repeats them. */
export function referencedValues(values: Readonly<Record<string, string>> | undefined, env: NodeJS.ProcessEnv): string[] {
  const found: string[] = [];
  for (const value of Object.values(values ?? {})) {
    for (const [, name] of value.matchAll(REFERENCE)) {
      const secret = name === undefined ? undefined : env[name];
      if (secret !== undefined) found.push(secret);
    }
  }
  return found;
}
