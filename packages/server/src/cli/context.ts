import { readFileSync } from "node:fs";
import { Engine, type EngineOptions } from "@tapedeck/engine";
import { UsageError } from "./args.js";
import { loadHostModule } from "./load-host-module.js";

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

/** Opens the engine on `--data`, with the host module of `--host` if given. */
export async function openEngine(data: string, host: string | undefined, extra: EngineOptions = {}): Promise<Engine> {
  const hostTools = host === undefined ? undefined : await loadHostModule(host);
  return Engine.open({ dataDir: data, ...(hostTools ? { hostTools } : {}), ...extra });
}
