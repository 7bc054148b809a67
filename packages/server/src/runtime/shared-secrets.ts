import { readFileSync } from "node:fs";
import { EngineError, MASTER_KEY_ENV, MasterKeySource } from "@tapedeck/engine";
import { loadOrCreateServerSecret } from "../http/auth/server-secret.js";

/**
 * The secrets every node on one store must share: the server's signing secret (end-user tokens
 * are signed with it, webhook endpoints' secrets sealed under it) and the credential vault's
 * master key (credentials sealed under it; direct sessions' approvals signed with a key derived
 * from it). One node alone keeps both in its data folder; nodes on a store URL (PostgreSQL) have
 * no folder in common, so each must be given the same ones, and a node started without them
 * refuses to start, saying what to set, rather than sign what the others cannot verify.
 *
 * The signing secret: `TAPEDECK_SIGNING_SECRET` (64 hex characters), else `--signing-secret-file`,
 * else (a store in the data folder only) `<data>/server-secret`, created on first start.
 */
export const SIGNING_SECRET_ENV = "TAPEDECK_SIGNING_SECRET";

/** How to make each secret, for the messages: commands anyone can run. */
const MAKE_SIGNING_SECRET = "openssl rand -hex 32";
const MAKE_MASTER_KEY = "openssl rand -base64 32";

export interface SharedSecretsOptions {
  /** Whether the store is shared by URL (several nodes may use it), not kept in the data folder. */
  readonly storeUrl: boolean;
  readonly dataDir: string;
  /** `--signing-secret-file`. */
  readonly signingSecretFile: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly warn: (line: string) => void;
}

/** The server's signing secret. Throws an `EngineError` (misconfigured) saying what to set when it is missing or malformed. */
export function signingSecret(options: SharedSecretsOptions): Buffer {
  const fromEnv = options.env[SIGNING_SECRET_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return parseSecret(fromEnv.trim(), `${SIGNING_SECRET_ENV}`);
  if (options.signingSecretFile !== undefined) return parseSecret(readSecretFile(options.signingSecretFile), `the file ${options.signingSecretFile}`);
  if (options.storeUrl) {
    throw new EngineError(
      "misconfigured",
      `A server on a store URL shares its signing secret with every node on that store (end-user tokens and webhook endpoint secrets depend on it): set ${SIGNING_SECRET_ENV} to 64 hex characters (make them once with \`${MAKE_SIGNING_SECRET}\`), or pass --signing-secret-file <a file holding them>, the same on every node.`,
    );
  }
  return loadOrCreateServerSecret(options.dataDir, options.warn);
}

/**
 * Refuses a server on a store URL whose vault has no master key from `TAPEDECK_MASTER_KEY` (the
 * key file of one node's data folder would seal credentials the others cannot open). Throws an
 * `EngineError` (misconfigured) saying what to set; a malformed variable is refused too. Returns
 * the keys (current, then previous) for the fingerprint check; undefined when not on a store URL.
 */
export function requireSharedMasterKey(options: Pick<SharedSecretsOptions, "storeUrl" | "env">): { current: Buffer; previous: Buffer[] } | undefined {
  if (!options.storeUrl) return undefined;
  const keys = new MasterKeySource({ env: options.env });
  if (!keys.fromEnvironment) {
    throw new EngineError(
      "misconfigured",
      `A server on a store URL shares the credential vault's master key with every node on that store: set ${MASTER_KEY_ENV} to 32 bytes in base64 (make them once with \`${MAKE_MASTER_KEY}\`), the same on every node.`,
    );
  }
  // Decodes them now: a malformed key (or previous key) fails the start, not the first credential.
  const current = keys.current(false);
  if (current === undefined)
    throw new EngineError("misconfigured", `${MASTER_KEY_ENV} is set but holds no key: set it to 32 bytes in base64 (\`${MAKE_MASTER_KEY}\`).`);
  return { current: current.key, previous: keys.previous().map((key) => key.key) };
}

function readSecretFile(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new EngineError(
      "misconfigured",
      `--signing-secret-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); write 64 hex characters into it (\`${MAKE_SIGNING_SECRET} > ${path}\`), the same file on every node.`,
    );
  }
}

function parseSecret(hex: string, where: string): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new EngineError(
      "misconfigured",
      `The signing secret in ${where} must be 64 hex characters (32 bytes; make them with \`${MAKE_SIGNING_SECRET}\`); it has ${hex.length} characters${/^[0-9a-fA-F]*$/.test(hex) ? "" : " that are not all hex"}.`,
    );
  }
  return Buffer.from(hex, "hex");
}
