/**
 * How many toolsets a test engine's SQLite file holds, read from the file itself (read-only,
 * beside the engine's own connection): the way a test sees that a refused registration stored
 * nothing, whatever the engine's API would report.
 */
import { join } from "node:path";
import Database from "better-sqlite3";

/** Rows of the toolsets table in `dataDir`'s `tapedeck.db`. */
export function storedToolsets(dataDir: string): number {
  const db = new Database(join(dataDir, "tapedeck.db"), { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM toolsets").get() as { n: number }).n;
  } finally {
    db.close();
  }
}
