import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { findSecrets } from "../../test-support/leak-scan.js";
import type { Engine } from "../../engine.js";
import { startHttpFixture, type HttpFixture } from "../../test-support/mcp/http-fixture.js";
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

/**
 * What each test here starts from: an HTTP fixture that takes one bearer at a time (`accept`),
 * an engine with a vault, and a toolset of the fixture registered with the recipe's own header
 * (registration happens before a toolset id exists), naming the vault credential `credential`.
 */
async function withVaultMcp(
  credential: string | undefined,
  body: (t: { engine: Engine; id: string; dataDir: string; fixture: HttpFixture; accept: (token: string) => void }) => Promise<void>,
): Promise<void> {
  let valid = REGISTRATION;
  const fixture = await startHttpFixture({ requireBearer: () => valid });
  process.env.TAPEDECK_TEST_MCP_REGISTRATION = REGISTRATION;
  const t = await testEngine();
  const engine = await t.reopen({ masterKeyFile: join(t.dataDir, "master.key") });
  try {
    const server = {
      url: fixture.url,
      headers: { Authorization: "Bearer ${TAPEDECK_TEST_MCP_REGISTRATION}" },
      ...(credential === undefined ? {} : { credential }),
    };
    const { id } = await engine.registerToolset({ mcpServers: { fx: server } });
    await body({ engine, id, dataDir: t.dataDir, fixture, accept: (token) => (valid = token) });
  } finally {
    delete process.env.TAPEDECK_TEST_MCP_REGISTRATION;
    await engine.close();
    await t.cleanup();
    await fixture.close();
  }
}

describe("vault credentials on MCP connections", () => {
  it("a refused vault credential parks the call; renewing it sends the call again, once, with the same key", () =>
    withVaultMcp("FX", async ({ engine, id, dataDir, fixture, accept }) => {
      const scope = { kind: "toolset", toolsetId: id } as const;
      await engine.credentials.set({ name: "FX", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      accept(FRESH);
      const started = await engine.start({
        toolset: id,
        source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.effects({ op: "charge" });`,
      });
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
      assert.deepEqual(
        log.keys.map((k) => [k.key, k.attempts]),
        [[`${started.runId}/1`, 1]],
        "the refused send never reached the tool; the renewed one did, once",
      );
      assert.equal(log.count, 1);
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH, REGISTRATION]), []);
    }));

  it("an end user's credential is sent for that user's runs only; other runs use the toolset's", () =>
    withVaultMcp("FX", async ({ engine, id, dataDir, accept }) => {
      await engine.credentials.set({ name: "FX", scope: { kind: "toolset", toolsetId: id }, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      await engine.credentials.set({
        name: "FX",
        scope: { kind: "namespace", toolsetId: id, namespace: "alice" },
        hosts: ["127.0.0.1"],
        secret: { kind: "bearer", token: ALICE },
      });
      const run = async (namespace?: string) => {
        const started = await engine.start({
          toolset: id,
          source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "hi" });`,
          ...(namespace ? { namespace } : {}),
        });
        assert.equal(started.kind, "started");
        return started.kind === "started" ? engine.settled(started.runId) : undefined;
      };
      // The server takes one token at a time: whichever the run must carry.
      accept(ALICE);
      assert.equal((await run("alice"))?.status, "completed");
      accept(FRESH);
      assert.equal((await run("bob"))?.status, "completed", "bob has no credential of his own: the toolset's");
      accept(ALICE);
      const other = await run();
      assert.equal(other?.status, "waiting", "a run outside alice's namespace never carries her token: the toolset's is refused now");
      assert.deepEqual(await findSecrets(engine, dataDir, [FRESH, ALICE, REGISTRATION]), []);
    }));

  it("a server whose recipe names no credential keeps its own headers, whatever the vault holds for its host", () =>
    withVaultMcp(undefined, async ({ engine, id }) => {
      // Two fetch credentials for the same host (read and write): a server that names neither takes neither.
      for (const name of ["READ", "WRITE"])
        await engine.credentials.set({
          name,
          scope: { kind: "toolset", toolsetId: id },
          hosts: ["127.0.0.1"],
          secret: { kind: "bearer", token: `${name}-${STALE}` },
        });
      const started = await engine.start({
        toolset: id,
        source: `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "own header" });`,
      });
      assert.equal(started.kind, "started");
      assert.deepEqual(started.kind === "started" ? await started.end : undefined, { status: "completed", output: { text: "own header" } });
    }));
});
