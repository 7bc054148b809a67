import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { EngineError } from "@tapedeck/engine";
import { DATA_ENV } from "./args.js";

/**
 * Commands that work on what a data folder holds (list, show, decide, create keys…) never create
 * one: a folder given by mistake (a typo, the wrong directory) would otherwise be created
 * empty, and the command would answer "no runs" or make a key no server reads. Only `run`,
 * `toolset register` and `serve` create a data folder.
 */

/** The database that makes a folder a data folder. */
const DATABASE_FILE = "tapedeck.db";

/** Whether `dir` holds Tapedeck's data. */
export function isDataFolder(dir: string): boolean {
  return existsSync(join(dir, DATABASE_FILE));
}

/** Throws `not_found` naming the folder (as given and absolute) when it holds no Tapedeck data. */
export function requireDataFolder(dir: string): void {
  if (isDataFolder(dir)) return;
  const absolute = resolve(dir);
  const named = absolute === dir ? dir : `${dir} (${absolute})`;
  const what = existsSync(dir) ? "has no tapedeck.db" : "does not exist";
  throw new EngineError(
    "not_found",
    `No Tapedeck data folder at ${named}: it ${what}. Name the folder your runs are in with --data <dir> or ${DATA_ENV}=<dir>; \`tapedeck run\`, \`tapedeck toolset register\` and \`tapedeck serve\` create one.`,
  );
}
