/**
 * Spilled results of direct tool sessions in the PostgreSQL store's database, keyed by (session,
 * handle), in the table of PostgreSQL migration 2 (`pg-migrations.ts`); writes go through the
 * store's group commit, so a resolved `put` is committed, as in SQLite (`sqlite-blob-store.ts`).
 *
 * Invariants: reads and writes name the session in the key, never the handle alone. The text is
 * stored as its JSON string literal, so that any JavaScript string — a lone surrogate or a NUL
 * included, which PostgreSQL's `text` cannot hold — reads back exactly.
 */
import type { BlobStore } from "../blob-store.js";
import type { PgAccess } from "./pg-access.js";

export class PgBlobStore implements BlobStore {
  readonly #access: PgAccess;
  readonly #now: () => number;

  constructor(access: PgAccess, now: () => number = Date.now) {
    this.#access = access;
    this.#now = now;
  }

  async put(session: string, handle: string, text: string): Promise<void> {
    const literal = JSON.stringify(text);
    const at = this.#now();
    await this.#access.write((tx) =>
      tx.query("INSERT INTO direct_blobs (session, handle, text, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [session, handle, literal, at]),
    );
  }

  async get(session: string, handle: string): Promise<string | undefined> {
    const [row] = await this.#access.read<{ text: string }>("SELECT text FROM direct_blobs WHERE session = $1 AND handle = $2", [session, handle]);
    return row === undefined ? undefined : (JSON.parse(row.text) as string);
  }

  async delete(session: string, handle: string): Promise<void> {
    await this.#access.write((tx) => tx.query("DELETE FROM direct_blobs WHERE session = $1 AND handle = $2", [session, handle]));
  }

  deleteSession(session: string): Promise<number> {
    return this.#access.write(async (tx) => (await tx.query("DELETE FROM direct_blobs WHERE session = $1", [session])).rowCount ?? 0);
  }
}
