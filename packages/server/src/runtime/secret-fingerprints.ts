/**
 * Nodes on one store must be given the same secrets (`shared-secrets.ts`); this makes a node
 * given another one refuse to start, naming the secret, instead of joining and signing tokens
 * the others refuse. The first node to start records a fingerprint of each secret in the store;
 * every later start compares its own.
 *
 * Invariants:
 * - A fingerprint tells nothing of its secret, also to someone who reads the database and
 *   guesses: it is an HMAC keyed by a slow derivation (scrypt) of the secret with a random salt
 *   of its own row, never the secret nor a plain (fast, unsalted) hash of it.
 * - The master key may rotate (docs/design/postgres.md "master key rotation"): a node given the
 *   new key and the recorded one as TAPEDECK_MASTER_KEY_PREVIOUS records the new key's
 *   fingerprint in place of the old, so that the others follow by the same procedure.
 * - Checked at start only, before the admin key is made: a refused start changes nothing else.
 */
import { createHmac, randomBytes, scryptSync } from "node:crypto";
import { EngineError, MASTER_KEY_ENV } from "@tapedeck/engine";
import type { SecretFingerprint, SecretFingerprintStore } from "../store/secret-fingerprint-store.js";
import { SIGNING_SECRET_ENV } from "./shared-secrets.js";

/** The rows' names. */
export const SIGNING_SECRET_NAME = "signing secret";
export const MASTER_KEY_NAME = "master key";

/** scrypt's cost: about 20–50 ms per secret once per start, so that each guess against a stolen row costs as much. */
const SCRYPT = { N: 2 ** 14, r: 8, p: 1 } as const;

export function fingerprintOf(secret: Buffer, name: string, salt: string): string {
  const stretched = scryptSync(secret, Buffer.from(salt, "base64url"), 32, SCRYPT);
  return createHmac("sha256", stretched).update(`tapedeck shared secret fingerprint v1: ${name}`).digest("base64url");
}

function newFingerprint(secret: Buffer, name: string): SecretFingerprint {
  const salt = randomBytes(16).toString("base64url");
  return { salt, fingerprint: fingerprintOf(secret, name, salt) };
}

function matches(secret: Buffer, name: string, recorded: SecretFingerprint): boolean {
  return fingerprintOf(secret, name, recorded.salt) === recorded.fingerprint;
}

export interface NodeSecrets {
  readonly signing: Buffer;
  readonly masterKey: Buffer;
  /** TAPEDECK_MASTER_KEY_PREVIOUS, during a rotation. */
  readonly previousMasterKeys: readonly Buffer[];
}

/** Records the secrets' fingerprints if none are, else compares; throws an `EngineError` (misconfigured) naming the secret that differs and what to do. */
export async function checkSecretFingerprints(store: SecretFingerprintStore, secrets: NodeSecrets, now = Date.now()): Promise<void> {
  const signing = await store.claim(SIGNING_SECRET_NAME, newFingerprint(secrets.signing, SIGNING_SECRET_NAME), now);
  if (!matches(secrets.signing, SIGNING_SECRET_NAME, signing)) {
    throw new EngineError(
      "misconfigured",
      `This node's signing secret (${SIGNING_SECRET_ENV} or --signing-secret-file) is not the one the other nodes of this store were started with (its fingerprint, recorded in the store by the first node, differs): its end-user tokens would be refused by them, and theirs by it. Give this node the same ${SIGNING_SECRET_ENV} as the others. It did not start, and changed nothing.`,
    );
  }
  const master = await store.claim(MASTER_KEY_NAME, newFingerprint(secrets.masterKey, MASTER_KEY_NAME), now);
  if (matches(secrets.masterKey, MASTER_KEY_NAME, master)) return;
  if (secrets.previousMasterKeys.some((key) => matches(key, MASTER_KEY_NAME, master))) {
    // A rotation begins: the recorded key is this node's previous one; from now on the new key is the store's.
    await store.replace(MASTER_KEY_NAME, newFingerprint(secrets.masterKey, MASTER_KEY_NAME), now);
    return;
  }
  throw new EngineError(
    "misconfigured",
    `This node's ${MASTER_KEY_ENV} is not the master key the other nodes of this store use (its fingerprint, recorded in the store, differs): credentials it sealed could not be opened by them, nor theirs by it. Give this node the same ${MASTER_KEY_ENV} as the others; to rotate the key, start each node with the new key in ${MASTER_KEY_ENV} and the current one in ${MASTER_KEY_ENV}_PREVIOUS, then run rotate-key once (docs/design/postgres.md, "master key rotation"). It did not start, and changed nothing.`,
  );
}
