import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "../engine.js";

/**
 * Looks for secret values everywhere a run leaves something: every file of the data folder
 * (the SQLite database, its WAL and shared memory), every run's record and journal, and
 * `printed`: what else left the process (CLI output, log lines, error messages), by source.
 * Returns where each secret was found; an empty list means nothing leaked.
 */
export async function findSecrets(
  engine: Engine,
  dataDir: string,
  secrets: readonly string[],
  printed: Readonly<Record<string, string>> = {},
): Promise<string[]> {
  const found: string[] = [];
  for (const [where, text] of Object.entries(printed)) {
    for (const secret of secrets) if (text.includes(secret)) found.push(`${secret} in ${where}`);
  }
  for (const name of readdirSync(dataDir)) {
    const bytes = readFileSync(join(dataDir, name));
    for (const secret of secrets) if (bytes.includes(Buffer.from(secret))) found.push(`${secret} in ${name}`);
  }
  for (const run of await engine.listRuns({ limit: 10_000 })) {
    const text = JSON.stringify({ run, journal: await engine.journal(run.id, 0, 1_000_000) });
    for (const secret of secrets) if (text.includes(secret)) found.push(`${secret} in run ${run.id}`);
  }
  return found;
}
