import type { HttpSpec, JsonObject, LibrarySpec, PinnedTool, PolicySpec } from "@tapedeck/protocol";
import { nullObject } from "../util/null-object.js";
import { LIBRARY_GROUP_NAMES, type LibraryGroupName } from "./library-group-names.js";
import { ToolsetSpecError } from "./spec-error.js";

/**
 * Reads a toolset file's `library` entry: which groups of the built-in tool library it enables,
 * each with its options. Every mistake (an unknown group, an unknown option, a wrong value) is
 * refused here with the path that holds it (`library.files.mode`) and what is allowed, so a
 * toolset never pins options a group would ignore.
 */

/**
 * What pins a toolset's `library` groups (the engine's tool library, `library/pin-library.ts`):
 * their tools as pinned tools, or a `ToolsetSpecError` saying why a group cannot be enabled here.
 */
export interface LibraryPlace {
  pin(library: LibrarySpec, http: HttpSpec | undefined, policies: Readonly<Record<string, PolicySpec>>): Promise<PinnedTool[]>;
}

/** The options each group takes, and how each is checked (a message when the value is wrong). */
const GROUP_OPTIONS: { readonly [K in LibraryGroupName]: Readonly<Record<string, (value: unknown) => string | undefined>> } = {
  echo: {},
  time: {},
  json: {},
  web: {},
  files: { mode: (value) => (value === "rw" || value === "ro" ? undefined : 'must be "rw" (read and write, the default) or "ro" (read only)') },
  shell: {},
  memory: {},
};

function isGroup(name: string): name is LibraryGroupName {
  return (LIBRARY_GROUP_NAMES as readonly string[]).includes(name);
}

/** Parses `library` (absent: undefined). Throws `ToolsetSpecError` naming the path of the first problem. */
export function parseLibrarySpec(value: unknown): LibrarySpec | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ToolsetSpecError(`library must be an object of groups, each with its options: { "time": {}, "files": { "mode": "rw" } }`);
  }
  const groups: Record<string, JsonObject> = nullObject();
  for (const [group, options] of Object.entries(value as Record<string, unknown>)) {
    if (!isGroup(group)) {
      throw new ToolsetSpecError(`library.${group}: the tool library has no group "${group}"; its groups are ${LIBRARY_GROUP_NAMES.join(", ")}`);
    }
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new ToolsetSpecError(`library.${group} must be an object of options (write {} for the defaults)`);
    }
    const checks = GROUP_OPTIONS[group];
    for (const [key, option] of Object.entries(options as Record<string, unknown>)) {
      const check = Object.hasOwn(checks, key) ? checks[key] : undefined;
      if (check === undefined) {
        const allowed = Object.keys(checks);
        throw new ToolsetSpecError(
          `library.${group} has an unknown option "${key}"; ${allowed.length === 0 ? "this group takes no options (write {})" : `its options: ${allowed.join(", ")}`}`,
        );
      }
      const problem = check(option);
      if (problem !== undefined) throw new ToolsetSpecError(`library.${group}.${key} ${problem}, got ${JSON.stringify(option)}`);
    }
    groups[group] = options as JsonObject;
  }
  return groups;
}
