import type { PinnedTool, PolicySpec } from "@tapedeck/protocol";
import { FETCH_INPUT_SCHEMA, FETCH_OUTPUT_SCHEMA, HTTP_FETCH, HTTP_FETCH_DESCRIPTION, HTTP_GROUP } from "../sources/http/http-tool.js";
import { resolvePolicy } from "./policy.js";

/** The pinned `http.fetch` of a toolset whose (normalised) allow-list is `allow`. */
export function pinHttpTool(allow: readonly string[], policies: Readonly<Record<string, PolicySpec>>): PinnedTool {
  // Sorted and deduplicated: the same hosts in another order are the same toolset.
  const hosts = [...new Set(allow)].sort();
  return {
    group: HTTP_GROUP,
    name: HTTP_FETCH,
    source: "builtin",
    description: HTTP_FETCH_DESCRIPTION,
    inputSchema: FETCH_INPUT_SCHEMA,
    outputSchema: FETCH_OUTPUT_SCHEMA,
    policy: resolvePolicy(HTTP_GROUP, HTTP_FETCH, policies),
    http: { allow: hosts },
  };
}
