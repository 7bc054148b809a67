/**
 * The credential seam of the store: sealed credentials, as the vault (`secrets/vault.ts`) wrote
 * them. The store never sees a credential's value: `sealed` is AES-256-GCM ciphertext, and
 * everything else on the record is what `tapedeck credentials list` may show.
 *
 * Durability: as for the rest of the store, a resolved write is committed. `rewrap` rewrites
 * every credential in one commit: after a crash, either all of them are under the new key or
 * none is (what makes key rotation recoverable, see `docs/design/credentials.md`).
 */
export interface CredentialStore {
  /** Saves a credential, replacing the one of the same scope and name (a renewal). */
  put(credential: SealedCredential): Promise<void>;
  /** The credential of `scopeKey` named `name`, if any. */
  get(scopeKey: string, name: string): Promise<SealedCredential | undefined>;
  /** Credentials of these scopes (by `scopeKey`), in no particular order. */
  inScopes(scopeKeys: readonly string[]): Promise<SealedCredential[]>;
  /** Every credential, oldest first. */
  list(): Promise<SealedCredential[]>;
  /** Deletes a credential; false if there was none. */
  delete(scopeKey: string, name: string): Promise<boolean>;
  /**
   * Replaces every credential by `rewrite(credential)` in one commit, reading them inside that
   * commit (a credential saved meanwhile is rewritten too). If `rewrite` throws, nothing changes.
   * Resolves with how many were rewritten.
   */
  rewrap(rewrite: (credential: SealedCredential) => SealedCredential): Promise<number>;
}

/** A credential as stored: its description in clear, its value sealed. */
export interface SealedCredential {
  /** The scope, as `credentialScopeKey` spells it: part of the primary key and of the AAD. */
  readonly scopeKey: string;
  readonly name: string;
  /** `bearer` | `headers` | `basic` | `query` (`secrets/credential.ts`). */
  readonly kind: string;
  /** Normalised host patterns the credential is sent to. */
  readonly hosts: readonly string[];
  /** Fingerprint of the master key it is sealed under (never the key). */
  readonly keyId: string;
  /** base64url of the 96-bit IV. */
  readonly iv: string;
  /** base64url of ciphertext followed by the 16-byte GCM tag. */
  readonly sealed: string;
  /** When it is known to expire (ms since the epoch), if it is. */
  readonly expiresAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}
