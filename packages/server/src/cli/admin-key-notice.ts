import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServerLogger } from "../logging/server-logger.js";
import { shellArg } from "../shell-arg.js";
import type { Output } from "./print.js";

/**
 * Where `tapedeck serve` puts the admin API key its store's first start made. The key is never
 * written into the log (a log is collected, shipped and kept by others): on a terminal it is
 * printed once on stdout; otherwise (a service manager, a pipe, a container: whatever reads
 * stdout may keep it) it is written to `<data>/admin-key`, mode 0600 (this user alone reads
 * it), and the log says where, so that the operator reads it, keeps it elsewhere, and deletes
 * the file. Either way the log says that a key was made.
 */
export const ADMIN_KEY_FILE = "admin-key";

export interface AdminKeyPlace {
  readonly key: string;
  readonly url: string;
  readonly dataDir: string;
  /** Whether the store is a database URL (keys live there, not in the data folder). */
  readonly storeUrl: boolean;
}

export function announceAdminKey(place: AdminKeyPlace, out: Output, logger: ServerLogger): void {
  const of = place.storeUrl ? "store" : `data folder ${place.dataDir}`;
  const more = `More keys, limited to an end user or labels: tapedeck keys create ${place.storeUrl ? "--store <the store's URL>" : `--data ${shellArg(place.dataDir)}`} --namespace <user> --label <k>=<v>`;
  if (out.stdoutIsTerminal === true) {
    out.stdout(terminalNotice(place, of, more));
    logger.info(`created the admin API key of the ${of}; it was printed once on the terminal (never into this log). ${more}`);
    return;
  }
  const path = join(place.dataDir, ADMIN_KEY_FILE);
  try {
    mkdirSync(place.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(path, `${place.key}\n`, { mode: 0o600 });
    // A file left by an earlier start keeps its mode on writeFileSync: make it this user's alone.
    chmodSync(path, 0o600);
  } catch (error) {
    // The key exists only here now: losing it would leave a store nobody can reach but by `keys create`.
    out.stdout(terminalNotice(place, of, more));
    logger.error(
      `created the admin API key of the ${of}, but could not write it to ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}): it was printed once on stdout instead (never into this log). ${more}`,
    );
    return;
  }
  logger.warn(
    { file: path },
    `created the admin API key of the ${of} and wrote it to ${path} (mode 0600; the server keeps only its hash): read it (cat ${shellArg(path)}), keep it somewhere safe, then delete the file. ${more}`,
  );
}

function terminalNotice(place: AdminKeyPlace, of: string, more: string): string {
  return [
    `tapedeck: created the admin API key of the ${of}. It is shown this once: the server keeps only its hash.`,
    "",
    `    ${place.key}`,
    "",
    `  Send it with every /v1 request:  Authorization: Bearer ${place.key}`,
    `  From code:  new Tapedeck({ baseUrl: "${place.url}", apiKey: "${place.key}" })`,
    `  ${more}`,
  ].join("\n");
}
