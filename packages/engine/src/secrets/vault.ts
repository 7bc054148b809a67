import { randomBytes } from "node:crypto";
import { EngineError } from "../errors.js";
import { AllowEntryError, isAllowedHost, normaliseAllowEntry } from "../net/allow-list.js";
import type { CredentialStore, SealedCredential } from "../store/credential-store.js";
import {
  credentialScopeKey,
  describeScope,
  parseCredentialScopeKey,
  resolutionOrder,
  type CredentialInfo,
  type CredentialKind,
  type CredentialScope,
  type CredentialSecret,
} from "./credential.js";
import { checkSecret } from "./credential-secret.js";
import { MASTER_KEY_BYTES, MASTER_KEY_ENV, MASTER_KEY_PREVIOUS_ENV, type MasterKey, type MasterKeySource } from "./master-key.js";
import { credentialAad, open, seal } from "./vault-crypto.js";

/**
 * The credential vault: seals credentials into the store, resolves the one a call uses, and
 * rotates the master key.
 *
 * Invariants:
 * - A value is in clear only in memory, between `set`/`resolve` and the request it goes into;
 *   the store holds it sealed (`vault-crypto.ts`), under the key named by `keyId`.
 * - No key is needed (and no key file is created) until a credential is set or found.
 * - `resolve` looks in the run's scope, then its end user's (namespace), then its toolset's,
 *   and answers with one credential of the first scope that has one for the host: never a mix.
 * - Rotation: the new key is written to the side, every credential is rewrapped in one store
 *   commit, and only then does the new key replace the key file. Every state a crash can leave
 *   opens: the keyring holds both keys until the rename, and the next vault to open finishes
 *   it (see `docs/design/credentials.md`).
 * - With the key from the environment, rotation is the operator's: every node is restarted with
 *   the new `TAPEDECK_MASTER_KEY` and the old one in `TAPEDECK_MASTER_KEY_PREVIOUS` (new seals use
 *   the new key, both open), then `rotate()` reseals, in one store commit, every row not under the
 *   current key. A row under a key the node lacks fails that credential's use only (`unreadable`,
 *   naming the credential and the variable to set), never the vault.
 */

export interface SetCredential {
  readonly name: string;
  readonly scope: CredentialScope;
  /** Host patterns, as in a toolset's `http.allow` (`api.github.com`, `*.example.com`). */
  readonly hosts: readonly string[];
  readonly secret: CredentialSecret;
  /**
   * When the credential is known to expire (ms since the epoch). From then on a call that would
   * send it parks (`credentials.expired`) without sending anything, until it is set again.
   */
  readonly expiresAt?: number;
}

/** The run a call belongs to, as resolution needs it. */
export interface CredentialContext {
  readonly runId: string;
  readonly toolsetId: string;
  readonly namespace?: string | undefined;
  /** The toolsets `toolsetId` derives from, nearest first: their credentials apply after its own. */
  readonly bases?: readonly string[];
}

export type CredentialResolution =
  /** No scope has a credential for this host: the request goes out as the script wrote it. */
  | { readonly kind: "none" }
  /** The credential to inject. */
  | { readonly kind: "found"; readonly name: string; readonly scope: CredentialScope; readonly secret: CredentialSecret }
  /** The first scope with a credential for the host has several: none is sent. */
  | { readonly kind: "ambiguous"; readonly scope: CredentialScope; readonly names: readonly string[] }
  /** The credential exists but cannot be opened (another master key, or tampered with). */
  | { readonly kind: "unreadable"; readonly name: string; readonly scope: CredentialScope; readonly reason: string }
  /** The credential is past its known expiry time: nothing is sent; the call waits for a renewal. */
  | { readonly kind: "expired"; readonly name: string; readonly scope: CredentialScope; readonly expiresAt: number }
  /** The credential a request named exists but is not bound to its host: it is not sent there. */
  | { readonly kind: "unbound"; readonly name: string; readonly scope: CredentialScope; readonly hosts: readonly string[] };

/** The credential names the CLI and API accept: safe in messages, markers and file names. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export class CredentialVault {
  readonly #store: CredentialStore;
  readonly #keys: MasterKeySource;
  readonly #now: () => number;
  readonly #onSet = new Set<(scope: CredentialScope, name: string) => void | Promise<void>>();

  constructor(store: CredentialStore, keys: MasterKeySource, now: () => number = Date.now) {
    this.#store = store;
    this.#keys = keys;
    this.#now = now;
  }

  /**
   * Seals and saves a credential, replacing one of the same name in the same scope. Throws an
   * `EngineError`: `invalid_request` for a bad name, host or value; `misconfigured` for the key.
   */
  async set(input: SetCredential): Promise<CredentialInfo> {
    if (!NAME.test(input.name))
      throw invalid(
        `The credential name ${JSON.stringify(input.name)} is not valid: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit.`,
      );
    const hosts = normaliseHosts(input.hosts);
    const problem = checkSecret(input.secret);
    if (problem !== undefined) throw invalid(`The credential ${input.name}: ${problem}`);
    const { current } = await this.#keyring(true);
    const key = current as MasterKey;
    const scopeKey = credentialScopeKey(input.scope);
    const existing = await this.#store.get(scopeKey, input.name);
    const now = this.#now();
    const identity = { scopeKey, name: input.name, kind: input.secret.kind, hosts };
    if (input.expiresAt !== undefined && !Number.isSafeInteger(input.expiresAt))
      throw invalid(`The credential ${input.name}: expiresAt must be a time in ms since the epoch.`);
    const record: SealedCredential = {
      ...identity,
      keyId: key.id,
      ...seal(key.key, credentialAad(identity), JSON.stringify(input.secret)),
      ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await this.#store.put(record);
    for (const listener of this.#onSet) await listener(input.scope, input.name);
    return infoOf(record);
  }

  /**
   * Calls `listener` after each credential is set (once durable); `set` resolves after the
   * listeners did (the engine re-sends the calls that waited for it). A listener must not throw.
   * Returns the unsubscribe.
   */
  onSet(listener: (scope: CredentialScope, name: string) => void | Promise<void>): () => void {
    this.#onSet.add(listener);
    return () => this.#onSet.delete(listener);
  }

  /** Every credential, oldest first, without values. */
  async list(): Promise<CredentialInfo[]> {
    return (await this.#store.list()).map(infoOf);
  }

  /** Deletes a credential; false if there was none. */
  delete(scope: CredentialScope, name: string): Promise<boolean> {
    return this.#store.delete(credentialScopeKey(scope), name);
  }

  /** The credential a call of this run to `host` uses (see `CredentialResolution`). Throws only if the key is misconfigured. */
  async resolve(context: CredentialContext, host: string, name?: string): Promise<CredentialResolution> {
    const scopes = resolutionOrder(context);
    const inScopes = await this.#store.inScopes(scopes.map(credentialScopeKey));
    // A named credential is looked up by name (first scope that has it), then checked against the host.
    const candidates = name === undefined ? inScopes.filter((c) => isAllowedHost(host, c.hosts)) : inScopes.filter((c) => c.name === name);
    for (const scope of scopes) {
      const scopeKey = credentialScopeKey(scope);
      const matching = candidates.filter((c) => c.scopeKey === scopeKey);
      if (matching.length === 0) continue;
      if (name !== undefined && !isAllowedHost(host, matching[0]!.hosts)) return { kind: "unbound", name, scope, hosts: matching[0]!.hosts };
      const expiresAt = matching.length === 1 ? matching[0]!.expiresAt : undefined;
      if (expiresAt !== undefined && expiresAt <= this.#now()) return { kind: "expired", name: matching[0]!.name, scope, expiresAt };
      if (matching.length > 1) return { kind: "ambiguous", scope, names: matching.map((c) => c.name).sort() };
      const credential = matching[0]!;
      const opened = this.#open(credential, await this.#keyring(false));
      if (typeof opened === "string") return { kind: "unreadable", name: credential.name, scope, reason: opened };
      return { kind: "found", name: credential.name, scope, secret: opened };
    }
    return { kind: "none" };
  }

  /**
   * With a key file: re-encrypts every credential under a new master key, then makes it the key
   * file's key. With the key from the environment: reseals every credential not under
   * `TAPEDECK_MASTER_KEY` (opened with `TAPEDECK_MASTER_KEY_PREVIOUS`) under it, in one commit.
   * Throws `misconfigured` (changing nothing) when a credential cannot be opened with the keys at
   * hand. Resolves with the id of the key every credential is now sealed under.
   */
  async rotate(): Promise<{ readonly keyId: string; readonly rewrapped: number }> {
    const keyring = await this.#keyring(true);
    if (this.#keys.fromEnvironment) return this.#resealUnderCurrent(keyring);
    const next = this.#keys.writePending(randomBytes(MASTER_KEY_BYTES));
    let rewrapped: number;
    try {
      rewrapped = await this.#store.rewrap((credential) => {
        const secret = this.#open(credential, keyring);
        if (typeof secret === "string")
          throw new EngineError("misconfigured", `Cannot rotate the master key: ${secret} Delete or set that credential again, then rotate.`);
        return { ...credential, keyId: next.id, ...seal(next.key, credentialAad(credential), JSON.stringify(secret)) };
      });
    } catch (error) {
      // The rewrap did not commit: every credential is still under the old key.
      this.#keys.discardPending();
      throw error;
    }
    this.#keys.commitPending();
    return { keyId: next.id, rewrapped };
  }

  /** Step 2 of rotating an environment key: every row not under the current key is resealed under it, in one store commit. */
  async #resealUnderCurrent(keyring: Keyring): Promise<{ readonly keyId: string; readonly rewrapped: number }> {
    const current = keyring.current as MasterKey;
    let rewrapped = 0;
    await this.#store.rewrap((credential) => {
      if (credential.keyId === current.id) return credential;
      const secret = this.#open(credential, keyring);
      if (typeof secret === "string") throw new EngineError("misconfigured", `Cannot rotate the master key: ${secret} Nothing was resealed.`);
      rewrapped += 1;
      return { ...credential, keyId: current.id, ...seal(current.key, credentialAad(credential), JSON.stringify(secret)) };
    });
    return { keyId: current.id, rewrapped };
  }

  /**
   * The keys that may open a credential: the key in use, the previous keys of the environment
   * and, if a rotation left one, the pending key. A pending key some credential is sealed under means the rewrap committed
   * before a crash: the rotation is finished here (the rename) before anything else.
   */
  async #keyring(create: boolean): Promise<Keyring> {
    const pending = this.#keys.pending();
    if (pending !== undefined && (await this.#store.list()).some((c) => c.keyId === pending.id)) this.#keys.commitPending();
    const current = this.#keys.current(create);
    const previous = this.#keys.previous();
    const stillPending = this.#keys.pending();
    return stillPending === undefined ? { current, previous } : { current, previous, pending: stillPending };
  }

  /** Why no key of the keyring opens a row sealed under `keyId`, and what to do: key ids only, never a key. */
  #missingKey(keyId: string, keyring: Keyring): string {
    if (!this.#keys.fromEnvironment)
      return `is sealed under master key ${keyId}, but the key from ${this.#keys.origin} is ${keyring.current?.id ?? "missing"}. Restore the master key it was sealed with, or set the credential again.`;
    const previous =
      keyring.previous.length === 0
        ? `${MASTER_KEY_PREVIOUS_ENV} is not set`
        : `${MASTER_KEY_PREVIOUS_ENV} holds ${keyring.previous.map((k) => k.id).join(", ")}`;
    return `is sealed under master key ${keyId}, which this node does not have (${MASTER_KEY_ENV} is ${keyring.current?.id ?? "missing"}; ${previous}). If the master key was rotated, set ${MASTER_KEY_PREVIOUS_ENV} to the key it was sealed with (the former ${MASTER_KEY_ENV}) until \`tapedeck credentials rotate-key\` has resealed it; otherwise set the credential again.`;
  }

  /** The secret, or why it cannot be opened (text for whoever must fix it). */
  #open(credential: SealedCredential, keyring: Keyring): CredentialSecret | string {
    const where = `The credential ${credential.name} of ${describeScopeKey(credential.scopeKey)}`;
    const key = [keyring.current, keyring.pending, ...keyring.previous].find((k) => k?.id === credential.keyId);
    if (key === undefined) return `${where} ${this.#missingKey(credential.keyId, keyring)}`;
    const text = open(key.key, credentialAad(credential), credential);
    if (text === undefined)
      return `${where} does not open with its master key: its stored record was changed (moved to another scope, name, kind or host?). Set it again.`;
    return JSON.parse(text) as CredentialSecret;
  }
}

/** The keys a vault opens with: `current` seals; `pending` (a key-file rotation's) and `previous` (the environment's) only open. */
interface Keyring {
  readonly current: MasterKey | undefined;
  readonly pending?: MasterKey;
  readonly previous: readonly MasterKey[];
}

function infoOf(record: SealedCredential): CredentialInfo {
  const scope = parseCredentialScopeKey(record.scopeKey);
  if (scope === undefined)
    throw new EngineError(
      "misconfigured",
      `The store holds a credential (${record.name}) with a scope this Tapedeck does not know: ${record.scopeKey}. Upgrade Tapedeck.`,
    );
  return {
    name: record.name,
    kind: record.kind as CredentialKind,
    scope,
    hosts: record.hosts,
    ...(record.expiresAt === undefined ? {} : { expiresAt: record.expiresAt }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

function describeScopeKey(key: string): string {
  const scope = parseCredentialScopeKey(key);
  return scope === undefined ? key : describeScope(scope);
}

function normaliseHosts(hosts: readonly string[]): string[] {
  if (hosts.length === 0) throw invalid("A credential needs at least one host to be sent to (e.g. --host api.github.com).");
  try {
    return [...new Set(hosts.map(normaliseAllowEntry))].sort();
  } catch (error) {
    if (error instanceof AllowEntryError) throw invalid(`Host ${error.message}`);
    throw error;
  }
}

function invalid(message: string): EngineError {
  return new EngineError("invalid_request", message);
}
