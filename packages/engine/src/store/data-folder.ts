/**
 * A data folder holds what runs leave (every tool call's arguments and result, in the journal),
 * the credential vault's master key and the server's signing secret: only its owner may read it.
 *
 * Invariants:
 * - A folder Tapedeck creates (and each missing parent) is created with mode 0700.
 * - Every file Tapedeck creates in it is created with mode 0600: the database before SQLite
 *   opens it, so that its `-wal` and `-shm` files, which SQLite creates with the database's mode,
 *   are too; the master key and the server secret are written 0600 by their owners.
 * - Modes of what exists already are left as they are (an operator may have chosen them).
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

/** Owner only: read, write, enter. */
export const DATA_FOLDER_MODE = 0o700;
/** Owner only: read, write. */
export const DATA_FILE_MODE = 0o600;
/** The SQLite database of a data folder. */
export const DATABASE_FILE = "tapedeck.db";

/** Creates the folder (and its missing parents) owner-only; an existing folder is left as it is. */
export function createDataFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DATA_FOLDER_MODE });
}

/** The database file of a data folder. */
export function databaseFile(dir: string): string {
  return join(dir, DATABASE_FILE);
}

/** Creates an empty file owner-only if it does not exist (an existing one is not touched). */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, "a", DATA_FILE_MODE));
}
