import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { HostToolModule } from "@tapedeck/engine";

/**
 * Loads a host tool module (`--host ./tools.ts`): TypeScript through tsx, JavaScript as is.
 * The module exports its groups by name (`export const github = { … }`) or as a default object.
 */
export async function loadHostModule(path: string): Promise<HostToolModule> {
  const absolute = resolve(path);
  const loaded = /\.[cm]?tsx?$/.test(absolute)
    ? ((await (await import("tsx/esm/api")).tsImport(pathToFileURL(absolute).href, import.meta.url)) as Record<string, unknown>)
    : ((await import(pathToFileURL(absolute).href)) as Record<string, unknown>);
  const candidate = isToolModule(loaded.default) ? loaded.default : withoutDefault(loaded);
  if (!isToolModule(candidate)) {
    throw new Error(`${path} is not a host tool module: export { <group>: { <name>: async (args, ctx) => result } }`);
  }
  return candidate;
}

function withoutDefault(module: Record<string, unknown>): Record<string, unknown> {
  const { default: _default, ...rest } = module;
  return rest;
}

function isToolModule(value: unknown): value is HostToolModule {
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value as Record<string, unknown>).every(
    (group) => typeof group === "object" && group !== null && Object.values(group as Record<string, unknown>).every((fn) => typeof fn === "function"),
  );
}
