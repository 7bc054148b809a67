import { randomBytes } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The server's signing secret (end-user tokens are HMAC-SHA256 with it): 32 random bytes, hex,
 * in `<data>/server-secret`, created on first start with mode 0600 (owner only). Whoever reads
 * it can mint tokens for any namespace, so it lives beside the database (which the same person
 * can read anyway) and never in the store's rows or a log. Deleting it invalidates every token.
 */
export const SECRET_FILE = "server-secret";

export function loadOrCreateServerSecret(dataDir: string, warn: (line: string) => void): Buffer {
  const path = join(dataDir, SECRET_FILE);
  try {
    // "wx": create only if absent, so two servers starting at once cannot overwrite each other's secret.
    writeFileSync(path, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  // POSIX modes only: on Windows the owner/group/other bits are not meaningful.
  if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
    warn(`tapedeck: warning: ${path} can be read by other users; anyone who reads it can mint tokens. Run: chmod 600 ${path}`);
  }
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new Error(`${path} is not a Tapedeck server secret (64 hex characters). Delete it to create a new one (every token issued so far stops working).`);
  }
  return Buffer.from(hex, "hex");
}
