/**
 * Trying again after a lost PostgreSQL connection: exponential backoff with jitter, and reads
 * that run again on a new connection. Reads change nothing, so running one again is always safe.
 */
import type pg from "pg";
import { isConnectionError } from "./pg-connection.js";

const FIRST_DELAY_MS = 25;
const MAX_DELAY_MS = 2_000;

/** The wait before attempt `attempt + 1`: doubling from 25 ms up to 2 s, with up to half of it random so that nodes do not retry in step. */
export function backoffDelay(attempt: number): number {
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 10));
  return base / 2 + Math.random() * (base / 2);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs a read on the pool, again on a new connection (with backoff, for up to `reconnectMs`) when its connection was lost. */
export async function readWithRetry<R extends object>(pool: pg.Pool, reconnectMs: number, text: string, values: readonly unknown[] = []): Promise<R[]> {
  const deadline = Date.now() + reconnectMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return (await pool.query(text, values as unknown[])).rows as R[];
    } catch (error) {
      if (!isConnectionError(error) || Date.now() >= deadline) throw error;
      await sleep(Math.min(backoffDelay(attempt), Math.max(0, deadline - Date.now())));
    }
  }
}
