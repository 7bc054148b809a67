import type { JsonValue } from "@tapedeck/protocol";
import { open, seal, type Sealed } from "./vault-crypto.js";

/**
 * JSON values sealed while they wait in the store for the one thing that may use them: a host
 * task's arguments until a worker takes it (`sources/host-task-args.ts`), a direct session's call
 * with `sensitiveParams` until it is sent (`direct/sealed-call-args.ts`). AES-256-GCM under a
 * purpose key (`purpose-key.ts`), with `<label>\n<binding>` as additional authenticated data: a
 * sealed value copied to another binding (another task, another call) or altered does not open.
 *
 * Invariants:
 * - The plaintext is never written: `seal` answers only the IV and the ciphertext.
 * - `open` answers the value only under the same key, label and binding; otherwise undefined,
 *   never a value sealed for something else.
 */
export class SealedValues {
  constructor(
    private readonly key: () => Buffer,
    private readonly label: string,
  ) {}

  seal(binding: string, value: JsonValue): Sealed {
    return seal(this.key(), this.#aad(binding), JSON.stringify(value));
  }

  /** The value sealed for `binding`, or undefined when it does not open (altered, sealed for another binding, under another key). */
  open(binding: string, sealed: Sealed): JsonValue | undefined {
    const opened = open(this.key(), this.#aad(binding), sealed);
    return opened === undefined ? undefined : (JSON.parse(opened) as JsonValue);
  }

  #aad(binding: string): Buffer {
    return Buffer.from(`${this.label}\n${binding}`);
  }
}

/** `value` if it has the shape of a sealed value (`{ iv, sealed }`, both strings), else undefined. */
export function asSealed(value: unknown): Sealed | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { iv, sealed } = value as { iv?: unknown; sealed?: unknown };
  return typeof iv === "string" && typeof sealed === "string" ? { iv, sealed } : undefined;
}
