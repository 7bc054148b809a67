/** The shared secrets' fingerprints in the PostgreSQL store's database (table of `pg-server-migrations.ts` 2), through the store's handle. */
import type { PostgresHandle } from "@tapedeck/engine/postgres";
import type { SecretFingerprint, SecretFingerprintStore } from "./secret-fingerprint-store.js";

export class PgSecretFingerprintStore implements SecretFingerprintStore {
  readonly #handle: PostgresHandle;

  constructor(handle: PostgresHandle) {
    this.#handle = handle;
  }

  claim(name: string, fingerprint: SecretFingerprint, now: number): Promise<SecretFingerprint> {
    return this.#handle.write(async (tx) => {
      // ON CONFLICT DO NOTHING then read: of two nodes claiming at once, the second reads the first's row.
      await tx.query("INSERT INTO server_secret_fingerprints (name, salt, fingerprint, recorded_at) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING", [
        name,
        fingerprint.salt,
        fingerprint.fingerprint,
        now,
      ]);
      const { rows } = await tx.query<SecretFingerprint>("SELECT salt, fingerprint FROM server_secret_fingerprints WHERE name = $1", [name]);
      return rows[0] ?? fingerprint;
    });
  }

  replace(name: string, fingerprint: SecretFingerprint, now: number): Promise<void> {
    return this.#handle.write(async (tx) => {
      await tx.query(
        `INSERT INTO server_secret_fingerprints (name, salt, fingerprint, recorded_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (name) DO UPDATE SET salt = excluded.salt, fingerprint = excluded.fingerprint, recorded_at = excluded.recorded_at`,
        [name, fingerprint.salt, fingerprint.fingerprint, now],
      );
    });
  }
}
