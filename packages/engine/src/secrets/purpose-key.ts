import { createHmac, randomBytes } from "node:crypto";
import type { MasterKeySource } from "./master-key.js";

/**
 * A key for one purpose of the engine (`sensitiveParams` hashes, sealed host task arguments,
 * direct sessions' approval signatures and sealed call arguments),
 * derived from the master key (the credential vault's) by HMAC with the purpose's name: every
 * process on a data folder derives the same key, and a derived key never helps anyone open a
 * credential or make another purpose's key.
 *
 * An engine with no master key (no data folder, no `TAPEDECK_MASTER_KEY`) uses a random key of
 * its own, made once per process: what it hashed or sealed is only comparable or openable in
 * that process. Rotating the master key changes every derived key (see `docs/design/tool-library.md`).
 */
export function purposeKey(keys: MasterKeySource, purpose: string): () => Buffer {
  let key: Buffer | undefined;
  return () => {
    if (key !== undefined) return key;
    let master: Buffer | undefined;
    try {
      master = keys.current(true)?.key;
    } catch {
      master = undefined;
    }
    key = master === undefined ? randomBytes(32) : createHmac("sha256", master).update(purpose).digest();
    return key;
  };
}

/**
 * What a direct session's pending approvals are signed with (`direct/approval-signature.ts`): every
 * process on a data folder verifies what another signed, and a journal row edited by hand does not
 * verify. Rotating the master key makes the approvals pending then unverifiable (`bad_signature`):
 * reject them, and the model asks again.
 */
export const DIRECT_SIGNING_PURPOSE = "tapedeck direct approval signing v1";
/** What `sensitiveParams` values are hashed with. */
export const SENSITIVE_PARAMS_PURPOSE = "tapedeck sensitive params v1";
/** What the arguments of a host task whose tool has `sensitiveParams` are sealed with while it waits for a worker. */
export const HOST_TASK_ARGS_PURPOSE = "tapedeck host task args v1";
/** What the live arguments of a direct session's call whose tool has `sensitiveParams` are sealed with until the call has its outcome (`direct/sealed-call-args.ts`). */
export const DIRECT_CALL_ARGS_PURPOSE = "tapedeck direct call args v1";
