import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for one credential value. A fresh random 96-bit IV per sealing (a key seals far
 * fewer than 2^32 values, so random IVs do not collide in practice), and the credential's
 * identity as additional authenticated data: a ciphertext copied to another scope, name, kind
 * or host binding fails to open instead of sending a secret where it was not meant to go.
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  /** base64url. */
  readonly iv: string;
  /** base64url of ciphertext + tag. */
  readonly sealed: string;
}

/** What a credential's ciphertext is bound to: everything that decides where its value is sent. */
export function credentialAad(identity: {
  readonly scopeKey: string;
  readonly name: string;
  readonly kind: string;
  readonly hosts: readonly string[];
}): Buffer {
  return Buffer.from(`tapedeck credential v1\n${JSON.stringify([identity.scopeKey, identity.name, identity.kind, identity.hosts])}`);
}

export function seal(key: Buffer, aad: Buffer, plaintext: string): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return { iv: iv.toString("base64url"), sealed: body.toString("base64url") };
}

/** The plaintext, or undefined when the key, the AAD or the bytes are not the ones it was sealed with. */
export function open(key: Buffer, aad: Buffer, sealed: Sealed): string | undefined {
  try {
    const body = Buffer.from(sealed.sealed, "base64url");
    if (body.length < TAG_BYTES) return undefined;
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64url"), { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
