import { toolPath } from "@tapedeck/protocol";
import { modelFacingNames } from "../toolset/model-names.js";

/**
 * The names direct tools have for the model, and the way back: `group_name` when the model APIs
 * accept it (`^[A-Za-z0-9_-]{1,64}$`), else the rewrite of `toolset/model-names.ts` (never two
 * tools with one name). The server always gets the tool's own name: only the model sees these.
 *
 * Invariants:
 * - `byModelName` is the inverse of `byPath`: every tool has one model name and no two share it.
 * - No tool takes a name of direct mode's own tools (`reserved`: `tool_find`, `fetch_blob`).
 * - One warning per rewritten name, naming the tool, its model name and why; a tool whose model
 *   name is simply `group_name` is not a rewrite.
 */

export interface ModelNameTable {
  /** Each tool's model name, by its path `group.name`. */
  readonly byPath: ReadonlyMap<string, string>;
  /** Each tool's path, by its model name. */
  readonly byModelName: ReadonlyMap<string, string>;
  /** One sentence per tool whose model name is not `group_name`. */
  readonly warnings: readonly string[];
}

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

export function modelNameTable(tools: readonly { readonly group: string; readonly name: string }[], reserved: readonly string[] = []): ModelNameTable {
  const names = modelFacingNames(tools, reserved);
  const reservedSet = new Set(reserved);
  const byPath = new Map<string, string>();
  const byModelName = new Map<string, string>();
  const warnings: string[] = [];
  const candidates = new Map<string, number>();
  for (const tool of tools) candidates.set(`${tool.group}_${tool.name}`, (candidates.get(`${tool.group}_${tool.name}`) ?? 0) + 1);
  for (const tool of tools) {
    const path = toolPath(tool);
    const name = names.get(path)!;
    byPath.set(path, name);
    byModelName.set(name, path);
    const natural = `${tool.group}_${tool.name}`;
    if (name !== natural)
      warnings.push(
        `Tool ${JSON.stringify(path)} is called ${JSON.stringify(name)} by the model: ${whyRewritten(natural, reservedSet, candidates)}; the server still gets ${JSON.stringify(tool.name)}.`,
      );
  }
  return { byPath, byModelName, warnings };
}

function whyRewritten(natural: string, reserved: ReadonlySet<string>, candidates: ReadonlyMap<string, number>): string {
  if (reserved.has(natural)) return `${JSON.stringify(natural)} is the name of one of direct mode's own tools`;
  if (natural.length > 64) return `${JSON.stringify(natural)} is longer than the 64 characters model APIs accept`;
  if (!VALID.test(natural)) return `${JSON.stringify(natural)} has characters model APIs do not accept (only A-Z, a-z, 0-9, _ and -)`;
  if ((candidates.get(natural) ?? 0) > 1) return `another tool would also be ${JSON.stringify(natural)}`;
  return `a rewritten name of another tool took ${JSON.stringify(natural)}`;
}
