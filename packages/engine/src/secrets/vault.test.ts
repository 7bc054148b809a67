import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { tempDir } from "../test-support/engines.js";
import { SqliteStore } from "../store/sqlite-store.js";
import type { EngineError } from "../errors.js";
import { MasterKeySource, MASTER_KEY_ENV, MASTER_KEY_PREVIOUS_ENV } from "./master-key.js";
import { CredentialVault } from "./vault.js";
import type { CredentialScope } from "./credential.js";

/**
 * The vault through its public methods, on a real SQLite file and key file: sealing (nothing
 * in clear on disk), the AAD that pins a ciphertext to its scope, resolution order, the key
 * file's mode, the environment key, and rotation with a crash at each step.
 */

const TOKEN = "tok_vault_test_value_7f3a9c";
const toolset: CredentialScope = { kind: "toolset", toolsetId: "ts_1" };
const alice: CredentialScope = { kind: "namespace", toolsetId: "ts_1", namespace: "alice" };
const run1: CredentialScope = { kind: "run", runId: "run_1" };

async function withVault(
  use: (v: {
    vault: CredentialVault;
    store: SqliteStore;
    dir: string;
    keyFile: string;
    reopen: (env?: Record<string, string>) => CredentialVault;
  }) => Promise<void>,
): Promise<void> {
  const dir = tempDir("tapedeck-vault-");
  const store = SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "full" });
  const keyFile = join(dir.path, "master.key");
  const reopen = (env: Record<string, string> = {}) => new CredentialVault(store.credentials, new MasterKeySource({ keyFile, env }));
  try {
    await use({ vault: reopen(), store, dir: dir.path, keyFile, reopen });
  } finally {
    await store.close();
    dir.cleanup();
  }
}

/** Whether any file of the folder holds `text` (the database, WAL, key files). */
function onDisk(dir: string, text: string): boolean {
  return readdirSync(dir).some((name) => readFileSync(join(dir, name)).includes(Buffer.from(text)));
}

const ctx = { runId: "run_1", toolsetId: "ts_1", namespace: "alice" };

describe("credential vault", () => {
  it("seals values: nothing in clear on disk; a key file of mode 0600 appears with the first credential", async () => {
    await withVault(async ({ vault, dir, keyFile }) => {
      assert.deepEqual(await vault.resolve(ctx, "api.example.com"), { kind: "none" });
      assert.equal(existsSync(keyFile), false, "no key until a credential is set");
      await vault.set({ name: "API", scope: toolset, hosts: ["api.example.com"], secret: { kind: "bearer", token: TOKEN } });
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(onDisk(dir, TOKEN), false);
      assert.equal(onDisk(dir, "api.example.com"), true, "control: the scan finds what is in clear");
      assert.deepEqual(await vault.resolve(ctx, "api.example.com"), { kind: "found", name: "API", scope: toolset, secret: { kind: "bearer", token: TOKEN } });
      assert.deepEqual(
        (await vault.list()).map((c) => [c.name, c.kind, c.hosts]),
        [["API", "bearer", ["api.example.com"]]],
      );
      assert.ok(!JSON.stringify(await vault.list()).includes(TOKEN));
    });
  });

  it("resolves run → namespace → toolset, one scope's credential, never merged; host patterns apply", async () => {
    await withVault(async ({ vault }) => {
      await vault.set({ name: "T", scope: toolset, hosts: ["*.example.com"], secret: { kind: "bearer", token: "toolset-token" } });
      await vault.set({ name: "N", scope: alice, hosts: ["api.example.com"], secret: { kind: "query", param: "key", value: "alice-value" } });
      await vault.set({ name: "R", scope: run1, hosts: ["run.example.com"], secret: { kind: "basic", username: "u", password: "run-password" } });
      const name = async (c: typeof ctx | { runId: string; toolsetId: string }, host: string) => {
        const r = await vault.resolve(c, host);
        return r.kind === "found" ? r.name : r.kind;
      };
      assert.equal(await name(ctx, "run.example.com"), "R");
      assert.equal(await name(ctx, "api.example.com"), "N");
      assert.equal(await name(ctx, "www.example.com"), "T");
      assert.equal(await name({ runId: "run_2", toolsetId: "ts_1" }, "api.example.com"), "T");
      assert.equal(await name(ctx, "example.com"), "none");
      await vault.set({ name: "N2", scope: alice, hosts: ["api.example.com"], secret: { kind: "bearer", token: "other-token" } });
      assert.deepEqual(await vault.resolve(ctx, "api.example.com"), { kind: "ambiguous", scope: alice, names: ["N", "N2"] });
    });
  });

  it("a ciphertext moved to another scope or host binding does not open (AAD)", async () => {
    await withVault(async ({ vault, store }) => {
      await vault.set({ name: "API", scope: run1, hosts: ["api.example.com"], secret: { kind: "bearer", token: TOKEN } });
      const [sealed] = await store.credentials.list();
      await store.credentials.put({ ...sealed!, scopeKey: '["toolset","ts_1"]' });
      await store.credentials.put({ ...sealed!, name: "EVIL", hosts: ["evil.example"] });
      const moved = await vault.resolve({ runId: "run_9", toolsetId: "ts_1" }, "api.example.com");
      assert.equal(moved.kind, "unreadable");
      assert.match(moved.kind === "unreadable" ? moved.reason : "", /was changed/);
      assert.equal((await vault.resolve(ctx, "evil.example")).kind, "unreadable");
      assert.ok(!JSON.stringify(moved).includes(TOKEN));
    });
  });

  it("refuses a key file others may read, a malformed environment key, and a credential under another key", async () => {
    await withVault(async ({ vault, keyFile, reopen }) => {
      await vault.set({ name: "API", scope: toolset, hosts: ["api.example.com"], secret: { kind: "bearer", token: TOKEN } });
      chmodSync(keyFile, 0o644);
      await assert.rejects(vault.resolve(ctx, "api.example.com"), (e: EngineError) => e.code === "misconfigured" && /chmod 600/.test(e.message));
      chmodSync(keyFile, 0o600);
      await assert.rejects(reopen({ [MASTER_KEY_ENV]: "c2hvcnQ=" }).resolve(ctx, "api.example.com"), /must be 32 bytes in base64/);
      const other = reopen({ [MASTER_KEY_ENV]: randomBytes(32).toString("base64") });
      const r = await other.resolve(ctx, "api.example.com");
      assert.equal(r.kind, "unreadable");
      assert.match(
        r.kind === "unreadable" ? r.reason : "",
        /sealed under master key \w+, which this node does not have \(TAPEDECK_MASTER_KEY is \w+; TAPEDECK_MASTER_KEY_PREVIOUS is not set\)/,
      );
      await assert.rejects(other.rotate(), /Cannot rotate the master key: The credential API of toolset ts_1 is sealed under .* Nothing was resealed/);
      assert.equal((await reopen().resolve(ctx, "api.example.com")).kind, "found", "a refused rotation changed nothing");
    });
  });

  it("an environment key rotates with TAPEDECK_MASTER_KEY_PREVIOUS: both open, rotate reseals under the current key, then the previous key can go", async () => {
    await withVault(async ({ reopen, store, dir }) => {
      const k1 = randomBytes(32).toString("base64");
      const k2 = randomBytes(32).toString("base64");
      const other = randomBytes(32).toString("base64");
      const underK1 = reopen({ [MASTER_KEY_ENV]: k1 });
      await underK1.set({ name: "A", scope: toolset, hosts: ["a.example.com"], secret: { kind: "bearer", token: TOKEN } });
      await underK1.set({ name: "B", scope: run1, hosts: ["b.example.com"], secret: { kind: "headers", headers: { "X-Api-Key": "headers-secret-1" } } });
      const k1Id = new MasterKeySource({ env: { [MASTER_KEY_ENV]: k1 } }).current(false)?.id;
      const k2Id = new MasterKeySource({ env: { [MASTER_KEY_ENV]: k2 } }).current(false)?.id;

      // A node with only the new key, before the rotation: that credential's use fails clearly, naming it and what to set.
      const early = await reopen({ [MASTER_KEY_ENV]: k2 }).resolve(ctx, "a.example.com");
      assert.equal(early.kind, "unreadable");
      const reason = early.kind === "unreadable" ? early.reason : "";
      assert.match(reason, /The credential A of toolset ts_1 is sealed under master key \w+, which this node does not have/);
      assert.match(reason, /set TAPEDECK_MASTER_KEY_PREVIOUS to the key it was sealed with/);
      for (const key of [k1, k2, TOKEN]) assert.equal(reason.includes(key), false, "no key or value in the reason");

      // Step 1: every node has the new key and the old one as previous (a list; an unrelated key may be in it too).
      const both = () => reopen({ [MASTER_KEY_ENV]: k2, [MASTER_KEY_PREVIOUS_ENV]: `${other}, ${k1}` });
      const found = await both().resolve(ctx, "a.example.com");
      assert.deepEqual(found.kind === "found" ? found.secret : null, { kind: "bearer", token: TOKEN });
      await both().set({ name: "C", scope: alice, hosts: ["c.example.com"], secret: { kind: "bearer", token: "tok_set_during_rotation" } });
      assert.deepEqual(
        (await store.credentials.list()).map((c) => c.keyId),
        [k1Id, k1Id, k2Id],
        "new seals use the current key",
      );
      await assert.rejects(
        reopen({ [MASTER_KEY_ENV]: k2, [MASTER_KEY_PREVIOUS_ENV]: "c2hvcnQ=" }).resolve(ctx, "a.example.com"),
        /TAPEDECK_MASTER_KEY_PREVIOUS \(key 1\) must be 32 bytes/,
      );

      // Step 2: one rotation reseals the rows not under the current key, in one commit.
      const rotated = await both().rotate();
      assert.deepEqual(rotated, { keyId: k2Id, rewrapped: 2 });
      assert.deepEqual(
        (await store.credentials.list()).map((c) => c.keyId),
        [k2Id, k2Id, k2Id],
      );
      assert.deepEqual(await both().rotate(), { keyId: k2Id, rewrapped: 0 }, "a second rotation has nothing left to do");

      // Step 3: the previous key goes; everything opens with the current key alone.
      const after = reopen({ [MASTER_KEY_ENV]: k2 });
      const b = await after.resolve({ ...ctx, runId: "run_1" }, "b.example.com");
      assert.deepEqual(b.kind === "found" ? b.secret : null, { kind: "headers", headers: { "X-Api-Key": "headers-secret-1" } });
      assert.equal((await after.resolve(ctx, "a.example.com")).kind, "found");
      assert.equal((await reopen({ [MASTER_KEY_ENV]: k1 }).resolve(ctx, "a.example.com")).kind, "unreadable", "the old key alone opens nothing now");
      assert.equal(onDisk(dir, TOKEN) || onDisk(dir, "headers-secret-1"), false);
    });
  });

  it("rotate re-encrypts every credential under a new key file; a crash before or after the rewrap commit still opens", async () => {
    await withVault(async ({ vault, keyFile, store, dir, reopen }) => {
      await vault.set({ name: "A", scope: toolset, hosts: ["a.example.com"], secret: { kind: "bearer", token: TOKEN } });
      await vault.set({ name: "B", scope: run1, hosts: ["b.example.com"], secret: { kind: "headers", headers: { "X-Api-Key": "headers-secret-1" } } });
      const oldKey = readFileSync(keyFile, "utf8");
      const { rewrapped, keyId } = await vault.rotate();
      assert.equal(rewrapped, 2);
      assert.notEqual(readFileSync(keyFile, "utf8"), oldKey);
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.deepEqual(
        (await store.credentials.list()).map((c) => c.keyId),
        [keyId, keyId],
      );
      assert.equal(existsSync(`${keyFile}.next`), false);
      assert.equal((await reopen().resolve(ctx, "a.example.com")).kind, "found");

      // Crash after the rewrap committed, before the rename: the credentials are under the new
      // key, which is still only in `.next`; the key file holds the old key. Made by undoing the rename.
      const beforeCrash = readFileSync(keyFile, "utf8");
      const rotated = await reopen().rotate();
      const pendingFile = `${keyFile}.next`;
      renameSync(keyFile, pendingFile);
      writeFileSync(keyFile, beforeCrash, { mode: 0o600 });
      const recovered = await reopen().resolve(ctx, "a.example.com");
      assert.deepEqual(recovered.kind === "found" ? recovered.secret : null, { kind: "bearer", token: TOKEN });
      assert.equal(existsSync(pendingFile), false, "the rotation was finished: the pending key is the key file now");
      assert.equal(new MasterKeySource({ keyFile, env: {} }).current(false)?.id, rotated.keyId);

      // Crash before the rewrap: a stale pending key is harmless, the old key still opens everything.
      new MasterKeySource({ keyFile, env: {} }).writePending(randomBytes(32));
      assert.equal((await reopen().resolve(ctx, "a.example.com")).kind, "found");
      assert.equal((await reopen().rotate()).rewrapped, 2);
      assert.equal(onDisk(dir, TOKEN) || onDisk(dir, "headers-secret-1"), false);
    });
  });
});
