import { UsageError } from "./args.js";

/**
 * `tapedeck serve --user-tool-ceilings deadlineMs=60000,memoryBytes=67108864` (or the same in
 * `TAPEDECK_USER_TOOL_CEILINGS`): the operator's ceilings on user tools' per-tool limits, as
 * the engine's `userToolCeilings`. Only the syntax is checked here; which names are limits, and
 * that each value is a positive whole number, the engine checks (and names) when it opens.
 */

/** Names the ceilings of a server given no `--user-tool-ceilings`. */
export const USER_TOOL_CEILINGS_ENV = "TAPEDECK_USER_TOOL_CEILINGS";

/** The ceilings in `text` (`name=value,…`), or undefined without any; `from` names where they came from, for the error. */
export function parseUserToolCeilings(text: string | undefined, from: string): Record<string, number> | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const ceilings: Record<string, number> = {};
  for (const part of text.split(",")) {
    const match = /^\s*([A-Za-z]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (match === null) throw new UsageError(`${from}: ${JSON.stringify(part)} is not name=value (such as deadlineMs=60000,memoryBytes=67108864)`);
    ceilings[match[1]!] = Number(match[2]);
  }
  return ceilings;
}
