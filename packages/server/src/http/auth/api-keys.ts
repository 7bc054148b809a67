import { createHash, randomBytes } from "node:crypto";
import { namespaceError, type Labels } from "@tapedeck/protocol/api";
import type { ApiKeyRecord, ApiKeyStore } from "../../store/api-key-store.js";

/** How an API key is written: the prefix tells keys from tokens (and lets secret scanners find leaked keys). */
export const API_KEY_PREFIX = "tdk_";

/**
 * The hash a key is stored and looked up by. SHA-256, not a slow password hash: a key is 256
 * random bits, so guessing it from its hash is as hopeless as guessing the key, and a slow
 * hash (bcrypt, argon2) would only add milliseconds to every request. Passwords need slow
 * hashes because people choose them; nobody chooses these.
 */
export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export interface NewApiKey {
  /** The key itself: shown once, never stored. */
  readonly secret: string;
  readonly record: ApiKeyRecord;
}

/** Creates and stores a key, limited to `namespace` and `labels` when given. */
export async function createApiKey(
  keys: ApiKeyStore,
  limits: { readonly namespace?: string; readonly labels?: Labels } = {},
  now = Date.now(),
): Promise<NewApiKey> {
  const problem = limits.namespace === undefined ? undefined : namespaceError(limits.namespace, "The key's namespace");
  if (problem !== undefined) throw new TypeError(problem);
  const secret = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const record: ApiKeyRecord = {
    id: `key_${randomBytes(6).toString("hex")}`,
    hash: hashApiKey(secret),
    ...(limits.namespace === undefined ? {} : { namespace: limits.namespace }),
    ...(limits.labels === undefined || Object.keys(limits.labels).length === 0 ? {} : { labels: limits.labels }),
    createdAt: now,
  };
  await keys.put(record);
  return { secret, record };
}

/** The admin key of a data folder's first start: created when the store has no key at all. */
export async function ensureAdminKey(keys: ApiKeyStore): Promise<NewApiKey | undefined> {
  if ((await keys.list()).length > 0) return undefined;
  return createApiKey(keys);
}

export function findApiKey(keys: ApiKeyStore, secret: string): Promise<ApiKeyRecord | undefined> {
  return keys.getByHash(hashApiKey(secret));
}
