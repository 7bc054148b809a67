/**
 * `search_tools`' answer: the declarations of the tools that match, best first, with the import
 * line that brings their groups into a script.
 */
import type { ToolSearchHit } from "@tapedeck/protocol/api";
import type { ModelText } from "./model-text.js";
import { TEXT_OVERHEAD_CHARS, bound } from "./text-limits.js";

/** One declaration is cut past this many characters (a tool with a huge schema). */
export const DECLARATION_CHARS = 4_000;

export function searchText(query: string, hits: readonly ToolSearchHit[]): ModelText {
  const quoted = bound(JSON.stringify(query), 200);
  if (hits.length === 0) return { text: `No tool matches ${quoted}. Try other words: what the tool does, or the name of its service.`, isError: false };
  const groups = [...new Set(hits.map((hit) => hit.group))].sort();
  const lines = [
    `${hits.length} tool${hits.length === 1 ? "" : "s"} match${hits.length === 1 ? "es" : ""} ${quoted}, best first. Import them with:`,
    `import { ${groups.join(", ")} } from "tapedeck:tools";`,
    ...hits.map((hit) => `\n// ${hit.tool}\n${bound(hit.declaration, DECLARATION_CHARS)}`),
  ];
  return { text: bound(lines.join("\n"), TEXT_OVERHEAD_CHARS), isError: false };
}
