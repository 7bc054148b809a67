/**
 * The credential store in the PostgreSQL store's database, written through its group commit.
 *
 * Invariant: `rewrap` reads (locking them) and rewrites every row inside one write, so it
 * commits whole or not at all, and a credential saved by another node meanwhile either waits
 * for it or is read by it.
 */
import type { CredentialStore, SealedCredential } from "../credential-store.js";
import type { PgAccess } from "./pg-access.js";

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

const PUT = `INSERT INTO credentials (scope_key, name, kind, hosts, key_id, iv, sealed, expires_at, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT (scope_key, name) DO UPDATE SET kind = excluded.kind, hosts = excluded.hosts, key_id = excluded.key_id,
    iv = excluded.iv, sealed = excluded.sealed, expires_at = excluded.expires_at, created_at = excluded.created_at, updated_at = excluded.updated_at`;

const COLUMNS = "scope_key, name, kind, hosts, key_id, iv, sealed, expires_at, created_at, updated_at";

export class PgCredentialStore implements CredentialStore {
  readonly #access: PgAccess;

  constructor(access: PgAccess) {
    this.#access = access;
  }

  put(credential: SealedCredential): Promise<void> {
    const values = valuesOf(credential);
    return this.#access.write(async (tx) => {
      await tx.query(PUT, values);
    });
  }

  async get(scopeKey: string, name: string): Promise<SealedCredential | undefined> {
    const [row] = await this.#access.read<CredentialRow>(`SELECT ${COLUMNS} FROM credentials WHERE scope_key = $1 AND name = $2`, [scopeKey, name]);
    return row === undefined ? undefined : credentialOf(row);
  }

  async inScopes(scopeKeys: readonly string[]): Promise<SealedCredential[]> {
    if (scopeKeys.length === 0) return [];
    return (await this.#access.read<CredentialRow>(`SELECT ${COLUMNS} FROM credentials WHERE scope_key = ANY($1::text[])`, [scopeKeys])).map(credentialOf);
  }

  async list(): Promise<SealedCredential[]> {
    return (await this.#access.read<CredentialRow>(`SELECT ${COLUMNS} FROM credentials ORDER BY created_at, ord`)).map(credentialOf);
  }

  delete(scopeKey: string, name: string): Promise<boolean> {
    return this.#access.write(
      async (tx) => ((await tx.query("DELETE FROM credentials WHERE scope_key = $1 AND name = $2", [scopeKey, name])).rowCount ?? 0) > 0,
    );
  }

  rewrap(rewrite: (credential: SealedCredential) => SealedCredential): Promise<number> {
    return this.#access.write(async (tx) => {
      const rows = (await tx.query<CredentialRow>(`SELECT ${COLUMNS} FROM credentials ORDER BY created_at, ord FOR UPDATE`)).rows;
      for (const row of rows) {
        const next = rewrite(credentialOf(row));
        if (next.scopeKey !== row.scope_key || next.name !== row.name) throw new Error(`rewrap: a credential cannot change its scope or name (${row.name})`);
        await tx.query(PUT, valuesOf(next));
      }
      return rows.length;
    });
  }
}

function valuesOf(credential: SealedCredential): unknown[] {
  return [
    credential.scopeKey,
    credential.name,
    credential.kind,
    JSON.stringify(credential.hosts),
    credential.keyId,
    credential.iv,
    credential.sealed,
    credential.expiresAt ?? null,
    credential.createdAt,
    credential.updatedAt,
  ];
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
