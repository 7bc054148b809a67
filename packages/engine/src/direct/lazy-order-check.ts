import { toolPath, type PinnedTool } from "@tapedeck/protocol";
import type { CheckedDirectOptions } from "./direct-options.js";
import { isLazyTool } from "./lazy-menu.js";

/**
 * Seed 002's wrong-order warning, as a pure check: lazy loading summarizes the tools registered
 * before it. A source registered after it is not an error, just useless — its tools are sent in
 * full on every turn — so the harness is warned once, naming them.
 */

export type DirectLayer =
  /** A source of tools (a toolset, a group of host tools), in registration order. */
  | { readonly kind: "tools"; readonly source: string; readonly tools: readonly PinnedTool[] }
  /** Lazy loading, with its options as checked. */
  | { readonly kind: "lazy"; readonly lazy: NonNullable<CheckedDirectOptions["lazy"]> };

/** How many tools the warning names before it says "and N more". */
const NAMED = 10;

/** The warning for `layers`, or `undefined` when every source that lazy loading would summarize comes before it. */
export function lazyOrderWarning(layers: readonly DirectLayer[]): string | undefined {
  const at = layers.findIndex((layer) => layer.kind === "lazy");
  if (at < 0) return undefined;
  const lazy = (layers[at] as Extract<DirectLayer, { kind: "lazy" }>).lazy;
  const late: { source: string; tools: string[] }[] = [];
  for (const layer of layers.slice(at + 1)) {
    if (layer.kind !== "tools") continue;
    const tools = layer.tools
      .filter((tool) => isLazyTool(lazy, tool, { path: toolPath(tool), name: tool.name, modelName: `${tool.group}_${tool.name}` }))
      .map((tool) => toolPath(tool));
    if (tools.length > 0) late.push({ source: layer.source, tools });
  }
  if (late.length === 0) return undefined;
  const all = late.flatMap((l) => l.tools);
  const named = all.slice(0, NAMED).join(", ") + (all.length > NAMED ? ` and ${all.length - NAMED} more` : "");
  return (
    `Lazy loading (${lazy.lowering}) is registered before ${late.map((l) => JSON.stringify(l.source)).join(", ")}, whose tools it would make lazy: ${named}. ` +
    "They are sent in full on every turn. Register lazy loading after the sources it should summarize."
  );
}
