/**
 * PostgresStore: the Store contract (the very suites SQLite passes), then what only PostgreSQL
 * has: `openStore` of a URL with an engine running a script on it, migrations under concurrent
 * opens and from a newer Tapedeck, a password kept out of errors, and connections lost under a
 * write and under the notifier. Needs TAPEDECK_TEST_POSTGRES_URL (see
 * `test-support/postgres-test-database.ts`).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { describeStoreContract } from "../contracts/store-contract.js";
import { eventually } from "../contracts/contract-test.js";
import { log, newRun, started } from "../contracts/fixtures.js";
import { openStore } from "../open-store.js";
import { pgMigrations } from "./pg-migrations.js";
import { postgresHandle, PostgresStore } from "./postgres-store.js";
import { describeWithPostgres, dropSchema, freshSchemaName, postgresStoreFactory, schemaUrl } from "../contracts/postgres-test-database.js";
import { testEngine, testSandboxes } from "../../test-support/engines.js";
import { harnessToolset, ToolHarness } from "../../test-support/tool-harness.js";

describeWithPostgres("PostgresStore", (url) => {
  describeStoreContract("PostgresStore", postgresStoreFactory(url));
  // Its notifier never polls: only a NOTIFY reaches a listener, so the contract's notification
  // tests fail here for a write that forgets to tell, or a NOTIFY that does not arrive.
  describeStoreContract("PostgresStore (notifier without polling)", postgresStoreFactory(url, { pollMs: 3_600_000 }));

  /** A fresh schema for one test, and an admin connection to the same database; `done` drops the schema. */
  async function freshSchema(): Promise<{ schema: string; url: string; admin: pg.Client; done: () => Promise<void> }> {
    const schema = freshSchemaName();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    return {
      schema,
      url: schemaUrl(url, schema),
      admin,
      done: async () => {
        await admin.end();
        await dropSchema(url, schema);
      },
    };
  }

  /** Resolves once pg_stat_activity shows a connection of `schema`'s store for which `condition` (SQL on pg_stat_activity) holds; its pid. */
  async function backendOf(admin: pg.Client, schema: string, condition: string): Promise<number> {
    let pid: number | undefined;
    await eventually(`a connection of the store in ${schema} where ${condition}`, async () => {
      const rows = (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND ${condition}`, [`tapedeck ${schema}`]))
        .rows;
      pid = rows[0]?.pid;
      return pid !== undefined;
    });
    return pid!;
  }

  void describe("PostgresStore on a real database", () => {
    after(() => testSandboxes().close());

    void it("openStore opens a postgres: URL; an engine runs a script there (tool calls, a signal), and another node on the same URL sees the run", async () => {
      const db = await freshSchema();
      const tools = new ToolHarness({ "shop.price": (args: { sku?: string }) => ({ sku: args.sku ?? "", cents: 500 }) });
      const t = await testEngine({ store: await openStore(db.url), hostTools: tools.module() });
      const other = await openStore(db.url);
      try {
        assert.ok(t.engine.listRuns !== undefined);
        const { id } = await t.engine.registerToolset(harnessToolset(["shop.price"]));
        const run = await t.engine.start({
          toolset: id,
          source: `import { shop } from "tapedeck:tools";
            export default async () => {
              const a = await shop.price({ sku: "a" });
              const go = await signal("go");
              const b = await shop.price({ sku: "b" });
              return { a, b, go };
            };`,
        });
        if (run.kind !== "started") throw new Error(`refused: ${run.diagnostics.map((d) => d.message).join("; ")}`);
        await eventually("the run to wait for its signal", async () => (await other.getRun(run.runId))?.status === "waiting");
        await t.engine.signal(run.runId, "go", { from: "test" });
        assert.deepEqual(await run.end, { status: "completed", output: { a: { sku: "a", cents: 500 }, b: { sku: "b", cents: 500 }, go: { from: "test" } } });
        assert.deepEqual(
          tools.calls.map((c) => c.args),
          [{ sku: "a" }, { sku: "b" }],
        );
        const seen = await other.getRun(run.runId);
        assert.equal(seen?.status, "completed");
        assert.deepEqual(await other.readJournal(run.runId), await t.engine.journal(run.runId));
        assert.deepEqual(await t.engine.verify(run.runId), {
          ok: true,
          end: { status: "completed", output: { a: { sku: "a", cents: 500 }, b: { sku: "b", cents: 500 }, go: { from: "test" } } },
        });
      } finally {
        await other.close();
        await t.cleanup();
        await db.done();
      }
    });

    /**
     * The stranded runs of the two-node test began here: renewals went through the group commit,
     * so under load they committed seconds after they were due and a live node's runs were
     * taken over. A renewal is one statement of its own, its deadline counted from when it is sent.
     */
    void it("a lease renewal is not queued behind journal writes: it lands while a batch is held open, its deadline counted from then", async () => {
      const db = await freshSchema();
      const store = await PostgresStore.open(db.url);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      try {
        const t = Date.now();
        await store.createRun(newRun("run_q", { status: "running" }), [started(0)]);
        await store.claimRun("run_q", "eng_a", t + 1_000, t);
        let entered!: () => void;
        const inBatch = new Promise<void>((resolve) => (entered = resolve));
        const held = postgresHandle(store)!.write(async () => {
          entered();
          await gate;
        });
        await inBatch;
        // Queued behind the held batch, as a busy node's appends are.
        const queued = store.append("run_q", [log(1)]);
        const before = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("still waiting behind the held batch after 10 s"), 10_000)));
        const outcome = await Promise.race([store.renewLeases("eng_a", 60_000).then(() => "renewed"), bound]).finally(() => clearTimeout(timer));
        assert.equal(outcome, "renewed");
        const until = (await store.getRun("run_q"))?.owner?.until ?? 0;
        assert.ok(until >= before + 60_000, `renewed until ${until - before} ms after it was sent (60000 expected)`);
        release();
        await held;
        await queued;
        assert.equal((await store.getRun("run_q"))?.journalLength, 2);
      } finally {
        release();
        await store.close();
        await db.done();
      }
    });

    /**
     * Issue 22's deadlocks (271–281 per two-node test) crossed multi-row renewals (`UPDATE runs …
     * WHERE owner = $1`, every held run's row) with claims and appends. A renewal now updates its
     * node's one lease row: with every run row locked by another transaction it still lands.
     */
    void it("a lease renewal locks no run row: it lands while another transaction holds every run row locked", async () => {
      const db = await freshSchema();
      const store = await PostgresStore.open(db.url);
      const locker = new pg.Client({ connectionString: db.url });
      await locker.connect();
      try {
        const t = Date.now();
        for (const id of ["run_k1", "run_k2", "run_k3"]) {
          await store.createRun(newRun(id, { status: "running" }), [started(0)]);
          await store.claimRun(id, "eng_a", t + 1_000, t);
        }
        await locker.query("BEGIN");
        await locker.query(`SELECT id FROM ${db.schema}.runs ORDER BY id FOR UPDATE`);
        const before = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("still waiting for a run row lock after 10 s"), 10_000)));
        const outcome = await Promise.race([store.renewLeases("eng_a", 60_000).then(() => "renewed"), bound]).finally(() => clearTimeout(timer));
        assert.equal(outcome, "renewed");
        await locker.query("ROLLBACK");
        for (const id of ["run_k1", "run_k2", "run_k3"]) assert.ok(((await store.getRun(id))?.owner?.until ?? 0) >= before + 60_000, `${id} renewed`);
      } finally {
        await locker.query("ROLLBACK").catch(() => undefined);
        await locker.end();
        await store.close();
        await db.done();
      }
    });

    void it("nodes opening a new schema at once apply each migration once", async () => {
      const db = await freshSchema();
      const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open(db.url)));
      try {
        const rows = (await db.admin.query<{ version: number }>(`SELECT version FROM ${db.schema}.schema_migrations ORDER BY version`)).rows;
        assert.deepEqual(
          rows.map((row) => row.version),
          pgMigrations.map((m) => m.version),
        );
        await stores[0]!.createRun(newRun("run_m"), [started(0)]);
        assert.equal((await stores[3]!.getRun("run_m"))?.journalLength, 1);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await db.done();
      }
    });

    void it("refuses a schema from a newer Tapedeck, changing nothing", async () => {
      const db = await freshSchema();
      try {
        await (await PostgresStore.open(db.url)).close();
        await db.admin.query(`INSERT INTO ${db.schema}.schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`);
        await assert.rejects(PostgresStore.open(db.url), /schema version 999, written by a newer Tapedeck.*Upgrade Tapedeck/);
        const { rows } = await db.admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${db.schema}.schema_migrations`);
        assert.equal(Number(rows[0]?.n), pgMigrations.length + 1);
      } finally {
        await db.done();
      }
    });

    void it("a URL that cannot be used is refused with an error that names it without its password", async () => {
      const wrong = new URL(url);
      wrong.password = "not-the-password-xyzzy";
      await assert.rejects(openStore(wrong.toString()), (error: Error) => {
        assert.match(error.message, /Tapedeck cannot open the PostgreSQL store "postgres:\/\/[^"]*:\*\*\*@/);
        assert.doesNotMatch(error.message, /xyzzy/);
        return true;
      });
      await assert.rejects(openStore(schemaUrl(url, "Bad-Schema")), /a schema must be lower-case letters, digits and _/);
    });

    void it("a write whose connection is lost before it commits is made again on a new connection, once", async () => {
      const db = await freshSchema();
      const store = await PostgresStore.open(db.url);
      try {
        await store.createRun(newRun("run_lost", { status: "running" }), [started(0)]);
        // Hold the run's row: the store's append waits for it inside its transaction.
        await db.admin.query("BEGIN");
        await db.admin.query(`SELECT 1 FROM ${db.schema}.runs WHERE id = 'run_lost' FOR UPDATE`);
        const append = store.append("run_lost", [log(1)], { status: "running", updatedAt: 5 });
        const pid = await backendOf(db.admin, db.schema, "wait_event_type = 'Lock'");
        // The connection dies mid-transaction (as when the server restarts or the network drops).
        await db.admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await db.admin.query("COMMIT");
        await append;
        assert.deepEqual(await store.readJournal("run_lost"), [started(0), log(1)]);
        assert.equal((await store.getRun("run_lost"))?.journalLength, 2);
      } finally {
        await store.close();
        await db.done();
      }
    });

    void it("a connection the server ends while its write runs no statement (as a fast stop does) fails no process: the write is made again on a new connection", async () => {
      const db = await freshSchema();
      const store = await PostgresStore.open(db.url);
      const handle = postgresHandle(store) ?? assert.fail("a PostgreSQL store has a handle");
      let runs = 0;
      try {
        const value = await handle.write(async (tx) => {
          runs++;
          const [row] = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
          if (runs === 1) {
            // The server ends this connection while it is checked out and idle between two of the
            // write's statements: PostgreSQL's FATAL 57P01 arrives with no query to take it, which
            // node-postgres emits as an 'error' event on the client (an unhandled one ends the process).
            await db.admin.query("SELECT pg_terminate_backend($1)", [row!.pid]);
            await eventually(
              `the backend ${row!.pid} to exit`,
              async () => (await db.admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [row!.pid])).rowCount === 0,
            );
            // Macrotasks for the client's socket to read the FATAL and its end.
            for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
          }
          return (await tx.query<{ n: number }>("SELECT 41 + 1 AS n")).rows[0]!.n;
        });
        assert.equal(value, 42);
        assert.equal(runs, 2, "the write ran again, once, on a new connection");
      } finally {
        await store.close();
        await db.done();
      }
    });

    void it("a notifier whose listening connection is lost listens again, and hears what another node publishes", async () => {
      const db = await freshSchema();
      const store = await PostgresStore.open(db.url, { pollMs: 3_600_000 });
      const other = await PostgresStore.open(db.url, { pollMs: 3_600_000 });
      const listening = async (): Promise<number[]> =>
        (
          await db.admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query LIKE 'LISTEN %'", [
            `tapedeck ${db.schema}`,
          ])
        ).rows.map((row) => row.pid);
      let heard = 0;
      let stop = (): void => {};
      try {
        let before: number[] = [];
        await eventually("both stores' notifiers to listen", async () => (before = await listening()).length === 2);
        for (const pid of before) await db.admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await eventually("both notifiers to listen again, on new connections", async () => {
          const now = await listening();
          return now.length === 2 && now.every((pid) => !before.includes(pid));
        });
        // Subscribed only now: what it hears is a NOTIFY that came over the new connection.
        stop = store.notifier.subscribe("t/after-loss", () => heard++);
        other.notifier.publish("t/after-loss");
        await eventually("the publish of another node to arrive after the loss", () => Promise.resolve(heard > 0));
      } finally {
        stop();
        await other.close();
        await store.close();
        await db.done();
      }
    });
  });
});
