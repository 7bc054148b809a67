import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { findSecrets } from "../../test-support/leak-scan.js";
import { startHttpFixture } from "../../test-support/mcp/http-fixture.js";
import { testEngine, testSandboxes } from "../../test-support/engines.js";

/**
 * Vault credentials on MCP connections (Streamable HTTP servers whose recipe names one, bound to
 * the server URL's host): the vault's token replaces what the recipe sends, each end user's credential gets a connection of
 * its own, and a 401 parks the call until the credential is renewed, after which it is sent
 * again with the same idempotency key — the server performs the effect once.
 */

after(() => testSandboxes().close());

const REGISTRATION = "mcp_registration_token_7d1f";
const STALE = "mcp_vault_stale_2c9e51";
const FRESH = "mcp_vault_fresh_a40b6d";
const ALICE = "mcp_vault_alice_e3f8c2";

describe("vault credentials on MCP connections", () => {
  it("a refused vault credential parks the call; renewing it sends the call again, once, with the same key", async () => {
    let valid = REGISTRATION;
    const fixture = await startHttpFixture({ requireBearer: () => valid });
    process.env.TAPEDECK_TEST_MCP_REGISTRATION = REGISTRATION;
    const t = await testEngine();
    const engine = await t.reopen({ masterKeyFile: join(t.dataDir, "master.key") });
    try {
      // Registration lists tools before any toolset id exists: it uses the recipe's own header.
      const spec = { mcpServers: { fx: { url: fixture.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_MCP_REGISTRATION}" }, credential: "FX" } } };
      const { id } = await engine.registerToolset(spec);
      const scope = { kind: "toolset", toolsetId: id } as const;
      await engine.credentials.set({ name: "FX", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      valid = FRESH;
      const started = await engine.start({ toolset: id, source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.effects({ op: "charge" });` });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      const parked = await engine.settled(started.runId);
      const wait = parked?.status === "waiting" ? parked.waits[0] : undefined;
      assert.equal(wait?.kind === "parked" && wait.reason, "credentials.expired");
      assert.equal((await engine.pendingDecisions({ runId: started.runId })).length, 1, "listed with the pending decisions");

      await engine.credentials.set({ name: "FX", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      const end = await engine.settled(started.runId, { next: true });
      assert.equal(end?.status, "completed");
      const log = fixture.state.effectsLog();
      assert.deepEqual(log.keys.map((k) => [k.key, k.attempts]), [[`${started.runId}/1`, 1]], "the refused send never reached the tool; the renewed one did, once");
      assert.equal(log.count, 1);
      assert.deepEqual(await findSecrets(engine, t.dataDir, [STALE, FRESH, REGISTRATION]), []);
    } finally {
      delete process.env.TAPEDECK_TEST_MCP_REGISTRATION;
      await engine.close();
      await t.cleanup();
      await fixture.close();
    }
  });

  it("an end user's credential is sent for that user's runs only; other runs use the toolset's", async () => {
    let valid = REGISTRATION;
    const fixture = await startHttpFixture({ requireBearer: () => valid });
    process.env.TAPEDECK_TEST_MCP_REGISTRATION = REGISTRATION;
    const t = await testEngine();
    const engine = await t.reopen({ masterKeyFile: join(t.dataDir, "master.key") });
    try {
      const { id } = await engine.registerToolset({ mcpServers: { fx: { url: fixture.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_MCP_REGISTRATION}" }, credential: "FX" } } });
      await engine.credentials.set({ name: "FX", scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      await engine.credentials.set({ name: "FX", scope: { kind: "namespace", toolsetId: id, namespace: "alice" }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: ALICE } });
      const run = async (namespace?: string) => {
        const started = await engine.start({ toolset: id, source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "hi" });`, ...(namespace ? { namespace } : {}) });
        assert.equal(started.kind, "started");
        return started.kind === "started" ? engine.settled(started.runId) : undefined;
      };
      // The server takes one token at a time: whichever the run must carry.
      valid = ALICE;
      assert.equal((await run("alice"))?.status, "completed");
      valid = FRESH;
      assert.equal((await run("bob"))?.status, "completed", "bob has no credential of his own: the toolset's");
      valid = ALICE;
      const other = await run();
      assert.equal(other?.status, "waiting", "a run outside alice's namespace never carries her token: the toolset's is refused now");
      assert.deepEqual(await findSecrets(engine, t.dataDir, [FRESH, ALICE, REGISTRATION]), []);
    } finally {
      delete process.env.TAPEDECK_TEST_MCP_REGISTRATION;
      await engine.close();
      await t.cleanup();
      await fixture.close();
    }
  });

  it("a server whose recipe names no credential keeps its own headers, whatever the vault holds for its host", async () => {
    const fixture = await startHttpFixture({ requireBearer: () => REGISTRATION });
    process.env.TAPEDECK_TEST_MCP_REGISTRATION = REGISTRATION;
    const t = await testEngine();
    const engine = await t.reopen({ masterKeyFile: join(t.dataDir, "master.key") });
    try {
      const { id } = await engine.registerToolset({ mcpServers: { fx: { url: fixture.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_MCP_REGISTRATION}" } } } });
      // Two fetch credentials for the same host (read and write): a server that names neither takes neither.
      for (const name of ["READ", "WRITE"]) await engine.credentials.set({ name, scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: `${name}-${STALE}` } });
      const started = await engine.start({ toolset: id, source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "own header" });` });
      assert.equal(started.kind, "started");
      assert.deepEqual(started.kind === "started" ? await started.end : undefined, { status: "completed", output: { text: "own header" } });
    } finally {
      delete process.env.TAPEDECK_TEST_MCP_REGISTRATION;
      await engine.close();
      await t.cleanup();
      await fixture.close();
    }
  });
});
