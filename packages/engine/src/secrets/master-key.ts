import { createHmac, randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { EngineError } from "../errors.js";

/**
 * The master key the vault seals credentials with: 32 bytes from `TAPEDECK_MASTER_KEY`
 * (base64), or from a key file created on first use; and, from the environment only, older keys
 * (`TAPEDECK_MASTER_KEY_PREVIOUS`, comma-separated) that only open what they sealed.
 *
 * Invariants:
 * - The key file is created with mode 0600 by an exclusive create (two processes creating it
 *   at once end up with the same key), and is refused when group or others may read it.
 * - A key is known to the store only by its id (an HMAC of a fixed text under the key), never
 *   by a value from which the key could be found.
 * - Rotation never overwrites the only copy of a key in use: the new key is written first to
 *   `<keyFile>.next` (temp + rename, fsync'd), and replaces the key file (rename) only once
 *   the store's rewrap has committed. See `docs/design/credentials.md`.
 * - A previous key never seals: it is in the keyring only to open rows sealed before a rotation
 *   of an environment key, until `rotate()` reseals them under the current key.
 */

export const MASTER_KEY_ENV = "TAPEDECK_MASTER_KEY";
export const MASTER_KEY_PREVIOUS_ENV = "TAPEDECK_MASTER_KEY_PREVIOUS";
export const MASTER_KEY_BYTES = 32;

export interface MasterKey {
  readonly key: Buffer;
  /** 16 hex characters naming the key in the store: which key sealed a credential. */
  readonly id: string;
}

export interface MasterKeyOptions {
  /** The key file (normally `<data>/master.key`). Absent: the key must come from the environment. */
  readonly keyFile?: string;
  /** Where `TAPEDECK_MASTER_KEY` is read. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export function masterKeyOf(key: Buffer): MasterKey {
  return { key, id: createHmac("sha256", key).update("tapedeck master key id v1").digest("hex").slice(0, 16) };
}

export class MasterKeySource {
  readonly #keyFile: string | undefined;
  readonly #env: Readonly<Record<string, string | undefined>>;

  constructor(options: MasterKeyOptions = {}) {
    this.#keyFile = options.keyFile;
    this.#env = options.env ?? process.env;
  }

  /** Where the key comes from, for messages: never the key. */
  get origin(): string {
    if (this.#fromEnv() !== undefined) return `the environment variable ${MASTER_KEY_ENV}`;
    return this.#keyFile === undefined ? "nowhere (no key file and no environment variable)" : `the key file ${this.#keyFile}`;
  }

  /** Whether the key comes from `TAPEDECK_MASTER_KEY` (then it cannot be rotated by the vault). */
  get fromEnvironment(): boolean {
    return this.#fromEnv() !== undefined;
  }

  /**
   * The key in use. Without `create`, undefined when there is none yet; with it, a key file is
   * created. Throws an `EngineError` (misconfigured) saying what to fix when the variable is
   * malformed, the key file is readable by others or damaged, or there is nowhere to keep a key.
   */
  current(create: boolean): MasterKey | undefined {
    const env = this.#fromEnv();
    if (env !== undefined) return masterKeyOf(decodeKey(env, MASTER_KEY_ENV));
    const file = this.#keyFile;
    if (file === undefined) {
      if (!create) return undefined;
      throw misconfigured(
        `No master key to seal credentials with: set ${MASTER_KEY_ENV} to 32 random bytes in base64 (e.g. the output of \`openssl rand -base64 32\`), or open the engine on a data folder, where a key file is created.`,
      );
    }
    const existing = readKeyFile(file);
    if (existing !== undefined || !create) return existing;
    return createKeyFile(file);
  }

  /**
   * The older keys of `TAPEDECK_MASTER_KEY_PREVIOUS` (comma-separated base64 keys), which open
   * what they sealed but never seal. Empty when unset; throws `misconfigured` when malformed.
   */
  previous(): MasterKey[] {
    const value = this.#env[MASTER_KEY_PREVIOUS_ENV];
    if (value === undefined || value.trim() === "") return [];
    return value
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map((part, index) => masterKeyOf(decodeKey(part, `${MASTER_KEY_PREVIOUS_ENV} (key ${index + 1})`)));
  }

  /** The key of a rotation that has not replaced the key file yet (`<keyFile>.next`), if any. */
  pending(): MasterKey | undefined {
    return this.#keyFile === undefined || this.fromEnvironment ? undefined : readKeyFile(`${this.#keyFile}.next`);
  }

  /** Writes `key` as the pending key, durably (step 1 of a rotation). */
  writePending(key: Buffer): MasterKey {
    const file = this.#requireKeyFile();
    writeDurably(`${file}.next`, key);
    return masterKeyOf(key);
  }

  /** Makes the pending key the key in use (step 3 of a rotation): one rename, then the folder is fsync'd. */
  commitPending(): void {
    const file = this.#requireKeyFile();
    try {
      renameSync(`${file}.next`, file);
    } catch (error) {
      // Another process finished this rotation first: nothing left to do.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    fsyncDirectory(dirname(file));
  }

  /** Forgets a pending key no credential was rewrapped under (a rotation that failed before its commit). */
  discardPending(): void {
    try {
      unlinkSync(`${this.#requireKeyFile()}.next`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }

  #requireKeyFile(): string {
    if (this.#keyFile === undefined || this.fromEnvironment) {
      throw misconfigured(
        `The master key comes from ${this.origin}, not a key file: there is no key file to replace. To rotate a key set in ${MASTER_KEY_ENV}, set the new key in it and the old one in ${MASTER_KEY_PREVIOUS_ENV}, then run \`tapedeck credentials rotate-key\`.`,
      );
    }
    return this.#keyFile;
  }

  #fromEnv(): string | undefined {
    const value = this.#env[MASTER_KEY_ENV];
    return value === undefined || value === "" ? undefined : value;
  }
}

/** A key from the environment; `where` names the variable (never the value) in the error. */
function decodeKey(value: string, where: string): Buffer {
  const key = Buffer.from(value.trim(), "base64");
  if (key.length !== MASTER_KEY_BYTES || key.toString("base64") !== value.trim()) {
    throw misconfigured(
      `${where} must be ${MASTER_KEY_BYTES} bytes in base64 (44 characters, e.g. the output of \`openssl rand -base64 32\`); it decodes to ${key.length} bytes. Fix or unset it.`,
    );
  }
  return key;
}

/** The key in `file`, or undefined if there is no such file. */
function readKeyFile(file: string): MasterKey | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  // Windows has no such bits; its ACLs are the folder's business.
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw misconfigured(
      `The master key file ${file} may be read by other users (mode ${(mode & 0o777).toString(8)}); refusing to use it. Run \`chmod 600 ${file}\`, and rotate the key (tapedeck credentials rotate-key) if someone else may have read it.`,
    );
  }
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== MASTER_KEY_BYTES) {
    throw misconfigured(
      `The master key file ${file} does not hold ${MASTER_KEY_BYTES} bytes in base64; it is damaged. Restore it from a backup: credentials sealed under it cannot be read without it.`,
    );
  }
  return masterKeyOf(key);
}

/** Creates `file` with a new key, or reads the one another process created first. */
function createKeyFile(file: string): MasterKey {
  const key = randomBytes(MASTER_KEY_BYTES);
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const existing = readKeyFile(file);
    if (existing === undefined) throw error;
    return existing;
  }
  try {
    writeSync(fd, `${key.toString("base64")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDirectory(dirname(file));
  return masterKeyOf(key);
}

/** Writes a key file whole or not at all: a temp file (0600, fsync'd), then a rename. */
function writeDurably(file: string, key: Buffer): void {
  const temp = `${file}.tmp`;
  try {
    unlinkSync(temp);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${key.toString("base64")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  fsyncDirectory(dirname(file));
}

/** Makes a rename or create in `dir` durable. Not possible on Windows, where it is skipped. */
function fsyncDirectory(dir: string): void {
  if (process.platform === "win32") return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function misconfigured(message: string): EngineError {
  return new EngineError("misconfigured", message);
}
