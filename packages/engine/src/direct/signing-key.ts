import { createHmac, randomBytes } from "node:crypto";
import type { MasterKeySource } from "../secrets/master-key.js";

/**
 * The key that signs a session's pending approvals (`approval-signature.ts`): derived from the
 * engine's master key (the credential vault's), so that every process on a data folder verifies
 * what another signed, and a journal row edited by hand does not verify. Derived, not the master
 * key itself: a signature never helps anyone open a credential.
 *
 * An engine with no master key (a store of its own, no key file, no `TAPEDECK_MASTER_KEY`) signs
 * with a random key of its own: its pending approvals verify only in that engine. Rotating the
 * master key makes the approvals pending then unverifiable (`bad_signature`): reject them, and the
 * model asks again.
 */
export function directSigningKey(keys: MasterKeySource): () => Uint8Array {
  let key: Uint8Array | undefined;
  return () => {
    if (key !== undefined) return key;
    let master: Buffer | undefined;
    try {
      master = keys.current(true)?.key;
    } catch {
      master = undefined;
    }
    key = master === undefined ? randomBytes(32) : createHmac("sha256", master).update("tapedeck direct approval signing v1").digest();
    return key;
  };
}
