/**
 * The API keys' rows, as both stores keep them (`server-migrations.ts`, `pg-server-migrations.ts`):
 * one mapping between rows and records, so that a key reads back the same from either store.
 * - A namespace or labels absent from the record are NULL in the row, and absent (not undefined)
 *   in the record read back; labels are JSON text.
 */
import type { ApiKeyRecord } from "./api-key-store.js";

export interface ApiKeyRow {
  readonly id: string;
  readonly hash: string;
  readonly namespace: string | null;
  readonly labels: string | null;
  readonly created_at: number;
}

export function keyToRow(key: ApiKeyRecord): ApiKeyRow {
  return {
    id: key.id,
    hash: key.hash,
    namespace: key.namespace ?? null,
    labels: key.labels === undefined ? null : JSON.stringify(key.labels),
    created_at: key.createdAt,
  };
}

export function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    hash: row.hash,
    ...(row.namespace !== null && { namespace: row.namespace }),
    ...(row.labels !== null && { labels: JSON.parse(row.labels) as Record<string, string> }),
    createdAt: row.created_at,
  };
}
