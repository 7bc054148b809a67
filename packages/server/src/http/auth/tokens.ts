import { createHmac, timingSafeEqual } from "node:crypto";
import type { Labels } from "@tapedeck/protocol/api";

/**
 * End-user tokens: `tdt_<claims>.<signature>`, both base64url; the signature is HMAC-SHA256 of
 * `tdt_<claims>` with the server secret. A token is checked without the store (nothing to look
 * up), expires on its own, and cannot be widened: changing a claim breaks the signature, and
 * the token is compared as minted, character for character (no other spelling of it is accepted).
 * There is no revocation list yet: a token lives until it expires (or the secret is replaced).
 */
export const TOKEN_PREFIX = "tdt_";

export interface TokenClaims {
  /** Format version. */
  readonly v: 1;
  /** The end user's namespace. */
  readonly ns: string;
  readonly labels: Labels;
  /** Expiry, ms since the epoch. */
  readonly exp: number;
  /** The id of the key that minted it (for audit). */
  readonly key: string;
}

export type TokenCheck =
  /** Signed by this server and not expired. */
  | { readonly ok: true; readonly claims: TokenClaims }
  /** Not a token of this server: malformed, or its signature does not match. */
  | { readonly ok: false; readonly reason: "forged" }
  /** Genuine, but past its expiry. */
  | { readonly ok: false; readonly reason: "expired"; readonly expiredAt: number };

export class TokenSigner {
  readonly #secret: Buffer;

  constructor(secret: Buffer) {
    this.#secret = secret;
  }

  mint(claims: TokenClaims): string {
    const body = `${TOKEN_PREFIX}${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
    return `${body}.${this.#sign(body)}`;
  }

  check(token: string, now: number): TokenCheck {
    const dot = token.lastIndexOf(".");
    if (!token.startsWith(TOKEN_PREFIX) || dot < 0) return { ok: false, reason: "forged" };
    const body = token.slice(0, dot);
    // The signature's exact text, not its decoded bytes: base64url decoding skips characters
    // outside its alphabet and ignores trailing bits, so many spellings decode to the same bytes,
    // and a token must have one spelling only (the one minted).
    const given = Buffer.from(token.slice(dot + 1), "utf8");
    const expected = Buffer.from(this.#sign(body), "utf8");
    // Constant time, so the signature cannot be found a byte at a time from response times.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "forged" };
    const claims = parseClaims(Buffer.from(body.slice(TOKEN_PREFIX.length), "base64url").toString("utf8"));
    // A signed token with bad claims was signed by a buggy or other-format server: refuse it all the same.
    if (!claims) return { ok: false, reason: "forged" };
    if (claims.exp <= now) return { ok: false, reason: "expired", expiredAt: claims.exp };
    return { ok: true, claims };
  }

  #sign(body: string): string {
    return createHmac("sha256", this.#secret).update(body).digest("base64url");
  }
}

function parseClaims(text: string): TokenClaims | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { v, ns, labels, exp, key } = value as Record<string, unknown>;
  if (v !== 1 || typeof ns !== "string" || typeof exp !== "number" || typeof key !== "string") return undefined;
  if (typeof labels !== "object" || labels === null || Array.isArray(labels)) return undefined;
  if (!Object.values(labels).every((l) => typeof l === "string")) return undefined;
  return { v, ns, labels: labels as Labels, exp, key };
}
