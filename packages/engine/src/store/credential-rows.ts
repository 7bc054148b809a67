/**
 * The credentials' rows, as both stores keep them (SQLite migration 7, and `pg-migrations.ts`):
 * one mapping between rows and sealed credentials, and one rule for `rewrap`, so that a credential
 * reads back the same from either store.
 * - Hosts are JSON text; an absent expiry is NULL, and absent (not undefined) when read back.
 * - A rewrap rewrites a credential's sealing only: its scope and name are its key and stay.
 */
import type { SealedCredential } from "./credential-store.js";

export interface CredentialRow {
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

export function credentialToRow(credential: SealedCredential): CredentialRow {
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

export function credentialFromRow(row: CredentialRow): SealedCredential {
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

/** Rewraps the credential of `row` with `rewrite`, and throws (a bug in the caller) if the rewrite moved it. */
export function rewrapRow(row: CredentialRow, rewrite: (credential: SealedCredential) => SealedCredential): CredentialRow {
  const next = rewrite(credentialFromRow(row));
  if (next.scopeKey !== row.scope_key || next.name !== row.name) throw new Error(`rewrap: a credential cannot change its scope or name (${row.name})`);
  return credentialToRow(next);
}
