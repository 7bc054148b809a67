/**
 * The credential store in the SQLite store's database (table of migration 7), written through
 * the store's group commit so that its writes have the store's durability.
 *
 * Invariant: `rewrap` reads and rewrites every row inside one write, so it commits whole or
 * not at all, and no row saved meanwhile escapes it.
 */
import type Database from "better-sqlite3";
import type { CredentialStore, SealedCredential } from "./credential-store.js";
import type { SqliteAccess } from "./sqlite-handle.js";

interface CredentialRow {
  readonly scope_key: string;
  readonly name: string;
  readonly kind: string;
  readonly hosts: string;
  readonly key_id: string;
  readonly iv: string;
  readonly sealed: string;
  readonly expires_at: number | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** `inScopes` is asked for a run's scopes: its own, and an end user's and the toolset's for each toolset of its base chain (at most 16). */
const MAX_SCOPES = 33;

export class SqliteCredentialStore implements CredentialStore {
  readonly #access: SqliteAccess;
  readonly #sql;

  constructor(db: Database.Database, access: SqliteAccess) {
    this.#access = access;
    this.#sql = {
      put: db.prepare<[CredentialRow]>(
        `INSERT INTO credentials (scope_key, name, kind, hosts, key_id, iv, sealed, expires_at, created_at, updated_at)
         VALUES (@scope_key, @name, @kind, @hosts, @key_id, @iv, @sealed, @expires_at, @created_at, @updated_at)
         ON CONFLICT (scope_key, name) DO UPDATE SET kind = excluded.kind, hosts = excluded.hosts, key_id = excluded.key_id,
           iv = excluded.iv, sealed = excluded.sealed, expires_at = excluded.expires_at, created_at = excluded.created_at, updated_at = excluded.updated_at`,
      ),
      get: db.prepare<[string, string], CredentialRow>("SELECT * FROM credentials WHERE scope_key = ? AND name = ?"),
      // One statement for any number of scopes up to MAX_SCOPES (padded with the first key).
      inScopes: db.prepare<string[], CredentialRow>(
        `SELECT * FROM credentials WHERE scope_key IN (${Array.from({ length: MAX_SCOPES }, () => "?").join(", ")})`,
      ),
      list: db.prepare<[], CredentialRow>("SELECT * FROM credentials ORDER BY created_at, rowid"),
      delete: db.prepare<[string, string]>("DELETE FROM credentials WHERE scope_key = ? AND name = ?"),
    };
  }

  put(credential: SealedCredential): Promise<void> {
    return this.#access.write(() => {
      this.#sql.put.run(rowOf(credential));
    });
  }

  get(scopeKey: string, name: string): Promise<SealedCredential | undefined> {
    return this.#access.read(() => {
      const row = this.#sql.get.get(scopeKey, name);
      return row === undefined ? undefined : credentialOf(row);
    });
  }

  inScopes(scopeKeys: readonly string[]): Promise<SealedCredential[]> {
    if (scopeKeys.length === 0) return Promise.resolve([]);
    if (scopeKeys.length > MAX_SCOPES) return Promise.reject(new Error(`inScopes: at most ${MAX_SCOPES} scopes (a run's), got ${scopeKeys.length}`));
    const padded = Array.from({ length: MAX_SCOPES }, (_, i) => scopeKeys[i] ?? scopeKeys[0]!);
    return this.#access.read(() => this.#sql.inScopes.all(...padded).map(credentialOf));
  }

  list(): Promise<SealedCredential[]> {
    return this.#access.read(() => this.#sql.list.all().map(credentialOf));
  }

  delete(scopeKey: string, name: string): Promise<boolean> {
    let deleted = false;
    return this.#access
      .write(() => {
        deleted = this.#sql.delete.run(scopeKey, name).changes > 0;
      })
      .then(() => deleted);
  }

  rewrap(rewrite: (credential: SealedCredential) => SealedCredential): Promise<number> {
    let count = 0;
    return this.#access
      .write(() => {
        const rows = this.#sql.list.all();
        for (const row of rows) {
          const next = rewrite(credentialOf(row));
          if (next.scopeKey !== row.scope_key || next.name !== row.name) throw new Error(`rewrap: a credential cannot change its scope or name (${row.name})`);
          this.#sql.put.run(rowOf(next));
        }
        count = rows.length;
      })
      .then(() => count);
  }
}

function rowOf(credential: SealedCredential): CredentialRow {
  return {
    scope_key: credential.scopeKey,
    name: credential.name,
    kind: credential.kind,
    hosts: JSON.stringify(credential.hosts),
    key_id: credential.keyId,
    iv: credential.iv,
    sealed: credential.sealed,
    expires_at: credential.expiresAt ?? null,
    created_at: credential.createdAt,
    updated_at: credential.updatedAt,
  };
}

function credentialOf(row: CredentialRow): SealedCredential {
  return {
    scopeKey: row.scope_key,
    name: row.name,
    kind: row.kind,
    hosts: JSON.parse(row.hosts) as string[],
    keyId: row.key_id,
    iv: row.iv,
    sealed: row.sealed,
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
