import { readFileSync } from "node:fs";
import type { JournalEntry } from "@tapedeck/protocol";
import { Engine, InProcessHostTools, type EngineOptions } from "@tapedeck/engine";
import { UsageError } from "./args.js";
import { requireDataFolder } from "./data-folder.js";
import { loadHostModule } from "./load-host-module.js";
import { storeLocation } from "./store-location.js";

/** Reads a JSON file, with an error that names the file. */
export function readJsonFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`the ${what} ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

export function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function parseJsonFlag(text: string | undefined, flag: string): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--${flag} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Runs `use` with an engine on `--data`, or on the store `TAPEDECK_STORE` names (with the host
 * module of `--host`, if given), and closes the engine however `use` ends. The data folder must exist (`not_found` naming it)
 * unless `access` is `create` (or `extra` gives a store of its own).
 *
 * The engine wakes only the runs it holds (`wake: "owned"`): a command executes the runs it
 * names and keeps them while it follows them (its timers fire here, and signals and decisions
 * sent from other processes reach it). With `wake: true`, any command would also wake every
 * overdue run of the folder, then stop it half-way when it closes.
 */
export async function withEngine<T>(
  data: string,
  host: string | undefined,
  use: (engine: Engine) => Promise<T>,
  extra: EngineOptions = {},
  access: "existing" | "create" = "existing",
): Promise<T> {
  // TAPEDECK_STORE (a postgres:// URL) names the store of every command, as for `tapedeck serve`.
  const store = storeLocation(undefined, data);
  if (access === "existing" && extra.store === undefined && store === data) requireDataFolder(data);
  const hostTools = host === undefined ? undefined : await loadHostModule(host);
  const engine = await Engine.open({ store, wake: "owned", ...(hostTools ? { sources: { host: new InProcessHostTools(hostTools) } } : {}), ...extra });
  try {
    return await use(engine);
  } finally {
    await engine.close();
  }
}

/** Every entry of a run's journal from index `start`, read a page at a time. */
export async function* journalEntries(engine: Engine, runId: string, start = 0): AsyncGenerator<JournalEntry> {
  const PAGE = 1000;
  for (let from = start; ; from += PAGE) {
    const page = await engine.journal(runId, from, PAGE);
    yield* page;
    if (page.length < PAGE) return;
  }
}
