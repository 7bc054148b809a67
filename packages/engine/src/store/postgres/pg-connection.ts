/**
 * How the PostgreSQL store connects: a store URL's settings for a pool (`pg-location.ts` reads
 * the URL), the pool itself, and which errors mean "the connection was lost, try again on
 * another" (not "the statement was wrong").
 *
 * Invariants:
 * - Every connection of a store works in its schema (`search_path` set at connection start,
 *   not by a later `SET` that a reset could lose), and reads `int8` as a JS number: every
 *   `bigint` column holds milliseconds or ids far below 2^53.
 * - No connection error ever crashes the process: an idle connection's error is noted (the pool
 *   replaces the connection on next use), and a checked-out one's too, whenever it comes.
 */
import pg from "pg";
import type { PostgresLocation } from "./pg-location.js";

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

export function openPool(location: PostgresLocation, onIdleError: (error: Error) => void, size = POOL_SIZE): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(location), max: size, idleTimeoutMillis: 30_000 });
  // Without a listener an idle connection's error (the server restarted) would crash the process.
  pool.on("error", onIdleError);
  // The pool listens only to idle connections: a checked-out one that the server ends while it
  // runs no statement (a fast stop's FATAL 57P01 between two statements of a write, or the socket's
  // end after a query failed) emits 'error' with nobody listening, which ends the process. Its
  // holder learns of it anyway (its next statement fails as a lost connection, and the writer tries
  // again on a new one), so the event itself needs no action.
  pool.on("connect", (client) => client.on("error", () => undefined));
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
