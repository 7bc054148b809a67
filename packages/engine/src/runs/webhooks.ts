import { createHash, randomBytes } from "node:crypto";
import type { Store } from "../store/store.js";
import type { Clock } from "../clock.js";

/**
 * Run-bound webhook URLs (`webhook(name)`): a random token bound to a run and a signal name, kept
 * in the store by its hash only, so the store never holds a URL that would deliver a signal.
 */

/** The store key of a token. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Binds a new token to the run and signal name; resolves with its URL (under `baseUrl`) once durable. */
export async function createWebhook(store: Store, clock: Clock, baseUrl: string, runId: string, name: string): Promise<string> {
  const token = randomBytes(24).toString("base64url");
  await store.putWebhook({ tokenHash: hashToken(token), runId, name, createdAt: clock.now() });
  return `${baseUrl}/hooks/${token}`;
}
