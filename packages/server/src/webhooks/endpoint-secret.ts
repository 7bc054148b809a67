import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Webhook endpoint secrets. A secret is `whsec_<base64 of 32 random bytes>` (the Standard
 * Webhooks form: the HMAC key is the decoded bytes). The server must keep it to sign, so it is
 * stored sealed: AES-256-GCM under a key derived (HKDF-SHA256) from the server's secret file, so
 * a copy of the database alone does not reveal it. Deleting the server secret makes every
 * endpoint's secret unreadable: such endpoints must be created again.
 */
export const SECRET_PREFIX = "whsec_";

export function newEndpointSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The HMAC key a secret stands for. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

const SEALED_VERSION = "v1";

export class SecretBox {
  readonly #key: Buffer;

  constructor(serverSecret: Buffer) {
    this.#key = Buffer.from(hkdfSync("sha256", serverSecret, Buffer.alloc(0), "tapedeck webhook endpoint secrets", 32));
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_VERSION}.${iv.toString("base64url")}.${sealed.toString("base64url")}`;
  }

  /** The secret, or undefined when it was sealed under another server secret (or damaged). */
  open(sealed: string): string | undefined {
    const [version, iv, body] = sealed.split(".");
    if (version !== SEALED_VERSION || iv === undefined || body === undefined) return undefined;
    try {
      const bytes = Buffer.from(body, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
    } catch {
      return undefined;
    }
  }
}
