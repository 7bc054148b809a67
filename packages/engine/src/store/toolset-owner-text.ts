import { canonicalJson } from "../util/canonical-json.js";
import type { ToolsetOwner } from "./toolset-store.js";

/**
 * How both stores keep a toolset's owner: one canonical JSON text, so that one scope is one
 * row (the primary key is the toolset and this text) however its labels were ordered, and a
 * scope without a namespace needs no NULL in a key.
 */
export function ownerText(owner: ToolsetOwner): string {
  return canonicalJson({ ...(owner.namespace === undefined ? {} : { namespace: owner.namespace }), labels: { ...owner.labels } });
}

export function ownerFromText(text: string): ToolsetOwner {
  return JSON.parse(text) as ToolsetOwner;
}
