/**
 * How the PostgreSQL store connects: a store URL read into a pool's settings, the pool itself,
 * and which errors mean "the connection was lost, try again on another" (not "the statement
 * was wrong").
 *
 * Invariants:
 * - Every connection of a store works in its schema (`search_path` set at connection start,
 *   not by a later `SET` that a reset could lose), and reads `int8` as a JS number: every
 *   `bigint` column holds milliseconds or ids far below 2^53.
 * - The password of a URL never appears in an error this module makes (`redactedUrl`).
 * - The pool never crashes the process: an idle connection's error is noted, and the pool
 *   replaces the connection on next use.
 */
import pg from "pg";

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

/** int8 as a number: the store's bigints are milliseconds since the epoch and serial ids. */
const INT8_OID = 20;
const parseInt8 = (value: string): number => Number(value);
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary"): unknown =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** How many connections a store's pool opens at most: the group commit holds one, reads and the notifier's listener share the rest. */
export const POOL_SIZE = 10;

export function connectionConfig(location: PostgresLocation): pg.ClientConfig {
  return {
    connectionString: location.connectionString,
    // Set at connection start: every statement of every connection runs in the store's schema.
    options: `-c search_path=${location.schema}${location.sessionOptions === undefined ? "" : ` ${location.sessionOptions}`}`,
    types,
    // Names the schema too: an operator (or a test) can tell which store a connection serves.
    application_name: `tapedeck ${location.schema}`,
    // A connection that cannot be made in this long is an error (retried with backoff by the writer).
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  };
}

export function openPool(location: PostgresLocation, onIdleError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(location), max: POOL_SIZE, idleTimeoutMillis: 30_000 });
  // Without a listener an idle connection's error (the server restarted) would crash the process.
  pool.on("error", onIdleError);
  return pool;
}

/**
 * Whether `error` says the connection is gone or could not be made (the server restarted, the
 * network dropped, too many connections), rather than something about the statement: such a
 * write may be tried again on a new connection.
 */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300") return true;
    if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"].includes(code)) return true;
  }
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(error.message);
}

/** Whether `error` is PostgreSQL giving up one transaction of two that crossed (a deadlock, a serialization failure): trying again is right. */
export function isTransientConflict(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return code === "40P01" || code === "40001";
}
