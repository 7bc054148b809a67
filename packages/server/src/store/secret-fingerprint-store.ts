/** Where the fingerprints of the secrets every node of a shared store must share are kept (`runtime/secret-fingerprints.ts` says what they are). */
export interface SecretFingerprint {
  /** Random, per secret and store (base64url): the same secret has another fingerprint in another store. */
  readonly salt: string;
  readonly fingerprint: string;
}

export interface SecretFingerprintStore {
  /** Records `fingerprint` under `name` unless one is recorded; resolves with the one recorded then (the given one when there was none). Of two nodes recording at once, one's is kept. */
  claim(name: string, fingerprint: SecretFingerprint, now: number): Promise<SecretFingerprint>;
  /** Records `fingerprint` under `name`, in place of the one recorded (a master key rotation begins). */
  replace(name: string, fingerprint: SecretFingerprint, now: number): Promise<void>;
}
