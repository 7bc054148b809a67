/**
 * Where a PostgreSQL store is: its URL read, and the URL as an error may show it.
 *
 * Invariant: the password of a URL never appears in an error this module makes (`redactedUrl`).
 */

/** A store URL read: the pool's connection string (without `schema`), and the schema. */
export interface PostgresLocation {
  readonly connectionString: string;
  /** The schema the store's tables live in (`?schema=` of the URL; default `public`). */
  readonly schema: string;
  /** More settings for every session, as `-c name=value` (e.g. `synchronous_commit=off`). */
  readonly sessionOptions?: string;
}

/** A schema name the store accepts: a plain lower-case identifier, so it needs no quoting anywhere (`search_path`, channel names). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** Reads `postgres://user:password@host:port/database?schema=name` (also `postgresql:`). Throws, naming what is wrong, for a URL it cannot use. */
export function parsePostgresUrl(location: string): PostgresLocation {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new Error(`The store URL ${JSON.stringify(redactedUrl(location))} is not a URL; write postgres://user:password@host:5432/database.`);
  }
  const schema = url.searchParams.get("schema") ?? "public";
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `The store URL ${JSON.stringify(redactedUrl(location))} names the schema ${JSON.stringify(schema)}; a schema must be lower-case letters, digits and _, starting with a letter or _, at most 48 characters.`,
    );
  }
  url.searchParams.delete("schema");
  return { connectionString: url.toString(), schema };
}

/** A URL as an error may show it: without a password (`postgres://user:secret@host`). */
export function redactedUrl(location: string): string {
  return location.replace(/^([A-Za-z][A-Za-z0-9+.-]+:\/\/[^/:@]*):[^/@]*@/, "$1:***@");
}
