import type { JsonValue } from "@tapedeck/protocol";
import { asSealed, SealedValues } from "../secrets/sealed-values.js";
import type { BlobStore } from "../store/blob-store.js";
import { canonicalJson } from "../util/canonical-json.js";

/**
 * The live arguments of a direct session's call whose tool has `sensitiveParams`, kept sealed in
 * the session's blobs (`direct_blobs`, handle `sealed_args_<seq>`) from the moment the call is
 * journaled until it has its outcome. The journal holds only the values' hashes and a session has
 * no script to compute them again: so a call that waits for approval (or is in flight) when the
 * engine restarts, evicts the session or hands it to another process is sent with its real values,
 * opened from here, instead of being refused.
 *
 * Invariants:
 * - The plaintext is never written: the blob holds AES-256-GCM ciphertext under the engine's
 *   `DIRECT_CALL_ARGS_PURPOSE` key, bound to (session, seq) as additional authenticated data.
 * - `open` answers arguments only when the blob opens under this session and seq, and the
 *   arguments redact to what the journal recorded (so what is sent is what was approved); an
 *   altered blob, one copied from another call or sealed under another key is `unopened`.
 * - The blob is deleted once the call has its outcome (`drop`): sent and answered, rejected, expired.
 * - The handle is not a spill handle (`BLOB_HANDLE`): `fetch_blob` and the blob API never read it.
 */
export type OpenedArgs =
  | { readonly kind: "opened"; readonly args: JsonValue }
  /** No blob: the call was journaled before its values were kept (or the engine stopped in between). */
  | { readonly kind: "none" }
  | { readonly kind: "unopened"; readonly why: string };

export class SealedCallArgs {
  readonly #sealed: SealedValues;

  constructor(
    key: () => Buffer,
    private readonly blobs: BlobStore,
  ) {
    this.#sealed = new SealedValues(key, "tapedeck direct call args v1");
  }

  /** Keeps `args` of call `seq` sealed; resolved: committed. */
  keep(session: string, seq: number, args: JsonValue): Promise<void> {
    return this.blobs.put(session, sealedArgsHandle(seq), JSON.stringify(this.#sealed.seal(binding(session, seq), args)));
  }

  /** The arguments of call `seq`, opened; `redact` gives what the journal records of them, and `recorded` is what it recorded. */
  async open(session: string, seq: number, recorded: JsonValue, redact: (args: JsonValue) => JsonValue): Promise<OpenedArgs> {
    const text = await this.blobs.get(session, sealedArgsHandle(seq));
    if (text === undefined) return { kind: "none" };
    const sealed = asSealed(parsed(text));
    const args = sealed === undefined ? undefined : this.#sealed.open(binding(session, seq), sealed);
    if (args === undefined) {
      return {
        kind: "unopened",
        why: `its values, kept sealed while it waited, did not open (the sealed copy was altered, belongs to another call, or was sealed under another master key)`,
      };
    }
    if (canonicalJson(redact(args)) !== canonicalJson(recorded)) {
      return { kind: "unopened", why: `its values, kept sealed while it waited, are not the arguments the journal recorded for it` };
    }
    return { kind: "opened", args };
  }

  /** Deletes what was kept of call `seq` (a no-op when nothing was). */
  drop(session: string, seq: number): Promise<void> {
    return this.blobs.delete(session, sealedArgsHandle(seq));
  }
}

/** The blob handle of call `seq`'s sealed arguments. */
export function sealedArgsHandle(seq: number): string {
  return `sealed_args_${seq}`;
}

function binding(session: string, seq: number): string {
  return `${session}\n${seq}`;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
