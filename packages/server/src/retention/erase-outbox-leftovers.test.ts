import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Engine, openStore, type Store } from "@tapedeck/engine";
import { postgresHandle } from "@tapedeck/engine/postgres";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { openServerStores } from "../store/server-stores.js";
import { eraseNamespace } from "./erase-namespace.js";

/**
 * The server's part of an end user's erasure leaves nothing either: a marker in a run's input and
 * output, in the webhook deliveries of its events (to the operator's endpoint and to the end
 * user's own) and in the end user's endpoint is, after the erasure, in no byte of any file of the
 * data folder (SQLite) and in no row of any table as text (PostgreSQL); another namespace's
 * deliveries and marker stay. (The engine's paths: `packages/engine/src/erase-namespace.test.ts`.)
 */
const marker = (): string => `mk${randomBytes(8).toString("hex")}x9`;

async function outboxLeavesNothing(store: Store, search: (text: string) => Promise<boolean>): Promise<void> {
  const { webhookOutbox: outbox } = await openServerStores(store);
  const engine = await Engine.open({ store, wake: false, recordEvents: true });
  try {
    const { id: toolset } = await engine.registerToolset({});
    await outbox.putEndpoint({ id: "wh_operator", url: "https://ops.example/hook", secret: "sealed:x", createdAt: 1 });
    const write = async (namespace: string, m: string) => {
      const started = await engine.start({ toolset, source: `export default async (input: unknown) => input;`, namespace, input: { note: m } });
      if (started.kind !== "started") return assert.fail("refused");
      await started.end;
      await outbox.putEndpoint({ id: `wh_${m}`, url: `https://${m}.example/hook`, secret: "sealed:x", namespace, createdAt: 1 });
      const body = (id: string) =>
        JSON.stringify({ id, type: "run.completed", createdAt: 1, data: { runId: started.runId, toolset, namespace, labels: {}, output: { note: m } } });
      await outbox.putDeliveries(
        ["wh_operator", `wh_${m}`].map((endpointId, i) => ({
          id: `dlv_${m}_${i}`,
          endpointId,
          eventId: `evt_${m}`,
          eventType: "run.completed",
          body: body(`evt_${m}`),
          createdAt: 1,
          nextAttemptAt: 1,
        })),
      );
    };
    const [alice, bob] = [marker(), marker()];
    await write("alice", alice);
    await write("bob", bob);
    for (const m of [alice, bob]) assert.ok(await search(m), `${m} is written`);

    const dry = await eraseNamespace(engine, outbox, "alice", { dryRun: true });
    assert.deepEqual([dry.webhookDeliveries, dry.webhookEndpoints], [2, 1]);
    const erased = await eraseNamespace(engine, outbox, "alice", { batchSize: 1 });
    assert.deepEqual([erased.runs, erased.webhookDeliveries, erased.webhookEndpoints], [1, 2, 1]);
    assert.equal(await search(alice), false, "nothing of the erased namespace is left");
    assert.ok(await search(bob), "the other namespace's deliveries stay");
    assert.deepEqual(
      (await outbox.listDeliveries("wh_operator", { limit: 10 })).map((d) => d.id),
      [`dlv_${bob}_0`],
    );
  } finally {
    await engine.close();
  }
}

describe("an erasure leaves nothing of the webhook outbox (SQLite)", () => {
  it("no byte of the data folder holds the erased namespace's deliveries or endpoint", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-erase-outbox-"));
    try {
      const store = await openStore(dir);
      await outboxLeavesNothing(store, (text) => {
        const needle = Buffer.from(text);
        const files = readdirSync(dir, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile());
        return Promise.resolve(files.some((entry) => readFileSync(join(entry.parentPath, entry.name)).includes(needle)));
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres("an erasure leaves nothing of the webhook outbox (PostgreSQL)", (url) => {
  void it("no row of any table as text holds the erased namespace's deliveries or endpoint", async () => {
    const schema = freshSchemaName();
    try {
      const store = await openStore(schemaUrl(url, schema));
      const handle = postgresHandle(store) ?? assert.fail("PostgreSQL");
      await outboxLeavesNothing(store, async (text) => {
        const tables = await handle.read<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [handle.schema]);
        for (const { table_name } of tables) {
          if ((await handle.read<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)).some((r) => r.row.includes(text))) return true;
        }
        return false;
      });
    } finally {
      await dropSchema(url, schema);
    }
  });
});
