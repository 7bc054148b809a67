/**
 * The one place a store is opened from where it is: a data folder or a store URL. The engine,
 * the server and the CLI all open theirs here, so a new kind of store is one more case in this
 * file.
 */
import { fileURLToPath } from "node:url";
import { PostgresStore } from "./postgres/postgres-store.js";
import { SqliteStore } from "./sqlite-store.js";
import type { Durability, Store } from "./store.js";

export interface OpenStoreOptions {
  /** How hard a commit tries to survive a crash. Default `"full"`. */
  readonly durability?: Durability;
}

/** What `openStore` takes: the schemes it knows, for its error and for whoever documents it. */
export const STORE_LOCATIONS =
  "a data folder's path (./.tapedeck: SQLite in <folder>/tapedeck.db), a file: URL of a data folder, memory: (a private in-memory store, gone when closed), or a PostgreSQL URL (postgres://user:password@host:5432/database, optionally ?schema=name)";

/** A scheme: letters, digits, +, - and . after a first letter, then a colon (two letters at least, so that C:\\ stays a path). */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/**
 * Opens the store at `location`:
 * - a path (no URL scheme): the data folder there, SQLite in `<folder>/tapedeck.db`, the folder
 *   (0700) and the database (0600) created if missing; the store's `dataFolder` is the path;
 * - `file:<url>`: the same, for the folder the file URL names;
 * - `memory:`: a private in-memory SQLite store (tests, checks that must write nothing);
 * - `postgres:` or `postgresql:` URL: the PostgreSQL store in that database (in the schema
 *   `?schema=` names, default `public`), created and migrated if needed; shared by every node
 *   opening the same URL.
 *
 * Throws for a URL of any other scheme, naming those it knows, and when the database cannot be
 * opened (or is from a newer Tapedeck).
 */
export function openStore(location: string, options: OpenStoreOptions = {}): Promise<Store> {
  return new Promise((resolve) => resolve(open(location, options)));
}

function open(location: string, options: OpenStoreOptions): Store | Promise<Store> {
  if (typeof location !== "string" || location === "") throw new Error(`openStore needs where the store is: ${STORE_LOCATIONS}.`);
  const scheme = SCHEME.exec(location)?.[1]?.toLowerCase();
  const durability = options.durability === undefined ? {} : { durability: options.durability };
  switch (scheme) {
    case undefined:
      return SqliteStore.openDataFolder(location, durability);
    case "file":
      return SqliteStore.openDataFolder(fileURLToPath(location), durability);
    case "memory":
      return SqliteStore.open({ path: ":memory:", ...durability });
    case "postgres":
    case "postgresql":
      return PostgresStore.open(location, durability);
    default:
      throw new Error(
        `Tapedeck cannot open the store ${JSON.stringify(redacted(location))}: it knows no "${scheme}:" stores. Give ${STORE_LOCATIONS}; a path with a colon in its first part reads as a URL, so write it ./like:this.`,
      );
  }
}

/** A URL as an error may show it: without a password (`postgres://user:secret@host`). */
function redacted(location: string): string {
  return location.replace(/^([A-Za-z][A-Za-z0-9+.-]+:\/\/[^/:@]*):[^/@]*@/, "$1:***@");
}
