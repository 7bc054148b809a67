import assert from "node:assert/strict";
import { describe } from "node:test";
import type { RunEvent } from "@tapedeck/protocol";
import type { Store } from "../store.js";
import { contractTest, eventually, type StoreFactory } from "./contract-test.js";
import { everyKind, failed, isConflict, log, newRun, runError, started, toolset, unserializable } from "./fixtures.js";

/**
 * The runs sub-store's contract (`run-store.ts`): creating runs (atomically, idempotently),
 * appending to journals (continuing them exactly, writing nothing of a failed batch, group
 * commit across runs), reading and listing, wake times, recorded events, and durability across
 * close and reopen. Public API for store implementers (`@tapedeck/engine/testing`).
 */
export function describeRunStoreContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`RunStore contract: ${name}`, () => {
    void describe("runs", () => {
      test("createRun then getRun gives back every field", async ({ store }) => {
        const run = newRun("run_full", {
          labels: { env: "prod", "dotted.key": 'quote"d' },
          namespace: "alice",
          parentId: "run_parent",
          input: { q: "héllo ✓", n: [1, 2.5, null] },
          idempotencyKey: "call_01",
          expiresAt: 1_702_592_000_000,
          caller: { runId: "run_caller", seq: 3 },
        });
        await store.createRun(run, [started(0)]);
        const record = await store.getRun(run.id);
        assert.ok(record);
        assert.equal(typeof record.updatedAt, "number");
        assert.deepEqual(record, { ...run, updatedAt: record.updatedAt, journalLength: 1 });
        assert.deepEqual(await store.readJournal(run.id), [started(0)]);
      });

      test("a run without optional fields comes back without them", async ({ store }) => {
        const run = newRun("run_bare", { input: null });
        await store.createRun(run, []);
        const record = await store.getRun(run.id);
        assert.ok(record);
        assert.deepEqual(record, { ...run, updatedAt: record.updatedAt, journalLength: 0 });
        assert.equal(await store.getRun("run_unknown"), undefined);
      });

      test("countRuns counts the runs in each status, of every namespace, every status present", async ({ store }) => {
        assert.deepEqual(await store.countRuns(), { queued: 0, running: 0, waiting: 0, completed: 0, failed: 0, cancelled: 0 });
        await store.createRun(newRun("run_q1"), [started(0)]);
        await store.createRun(newRun("run_q2", { namespace: "alice" }), [started(0)]);
        await store.createRun(newRun("run_w", { namespace: "bob" }), [started(0)]);
        await store.createRun(newRun("run_c"), [started(0)]);
        await store.append("run_w", [], { updatedAt: 10, status: "waiting" });
        await store.append("run_c", [], { updatedAt: 10, status: "running" });
        await store.append("run_c", [], { updatedAt: 11, status: "completed" });
        assert.deepEqual(await store.countRuns(), { queued: 2, running: 0, waiting: 1, completed: 1, failed: 0, cancelled: 0 });
      });

      test("a patch's events are recorded in its commit (none when it conflicts), oldest first", async ({ store }) => {
        await store.createRun(newRun("run_ev"), [started(0)]);
        const waiting: RunEvent = { type: "run.waiting", runId: "run_ev", waits: [{ kind: "sleep", seq: 1, until: 99 }], wakeAt: 99 };
        const ended: RunEvent = { type: "run.ended", runId: "run_ev", end: { status: "completed", output: { q: "héllo ✓" } } };
        assert.deepEqual(await store.recordedEvents(10), []);
        await store.append("run_ev", [], { updatedAt: 20, status: "waiting", events: [waiting] });
        await assert.rejects(store.append("run_ev", [started(5)], { updatedAt: 25, events: [ended] }), isConflict);
        await store.append("run_ev", [started(1)], { updatedAt: 30, status: "completed", events: [ended] });
        const recorded = await store.recordedEvents(10);
        assert.deepEqual(
          recorded.map(({ event, at }) => [event, at]),
          [
            [waiting, 20],
            [ended, 30],
          ],
        );
        assert.ok(recorded[0]!.id < recorded[1]!.id);
        assert.deepEqual(
          (await store.recordedEvents(1)).map((r) => r.event.type),
          ["run.waiting"],
        );
      });

      test("changedRuns gives the runs created or changed after a cursor, in commit order, each once at its state now", async ({ store }) => {
        await store.createRun(newRun("run_before"), [started(0)]);
        const now = await store.changesCursor();
        await store.createRun(newRun("run_ca"), [started(0)]);
        await store.createRun(newRun("run_cb"), [started(0)]);
        // A step without a patch changes no status: not a change of the run.
        await store.append("run_cb", [started(1)]);
        await store.append("run_ca", [], { updatedAt: 40, status: "completed" });
        // A store may give a change only once every transaction that began before it ended (on
        // PostgreSQL, any transaction of the cluster): another client's open one holds it back.
        await eventually("the changes to settle", async () => (await store.changedRuns(now, 10))!.length === 2);
        const changed = (await store.changedRuns(now, 10))!;
        assert.deepEqual(
          changed.map(({ run }) => [run.id, run.status]),
          [
            ["run_cb", "queued"],
            ["run_ca", "completed"],
          ],
        );
        // Page by page from each cursor: the same changes, none twice.
        const first = (await store.changedRuns(now, 1))!;
        assert.deepEqual(
          first.map(({ run }) => run.id),
          ["run_cb"],
        );
        assert.deepEqual(
          (await store.changedRuns(first[0]!.cursor, 10))!.map(({ run }) => run.id),
          ["run_ca"],
        );
        assert.deepEqual(await store.changedRuns(changed.at(-1)!.cursor, 10), []);
        await store.append("run_cb", [], { updatedAt: 50, status: "waiting" });
        await eventually("the change to settle", async () => (await store.changedRuns(changed.at(-1)!.cursor, 10))!.length === 1);
        assert.deepEqual(
          (await store.changedRuns(changed.at(-1)!.cursor, 10))!.map(({ run }) => [run.id, run.status]),
          [["run_cb", "waiting"]],
        );
        assert.equal(await store.changedRuns("not a cursor", 10), undefined);
      });

      test("a createRun that fails part-way writes nothing", async ({ store }) => {
        await assert.rejects(store.createRun(newRun("run_half"), [started(0), unserializable(1)]));
        assert.equal(await store.getRun("run_half"), undefined);
        assert.deepEqual(await store.readJournal("run_half"), []);
        await store.createRun(newRun("run_half"), [started(0)]);
        assert.equal((await store.getRun("run_half"))?.journalLength, 1);
      });

      test("creating an existing id fails and changes nothing", async ({ store }) => {
        await store.createRun(newRun("run_dup"), [started(0)]);
        await assert.rejects(store.createRun(newRun("run_dup", { source: "other" }), [started(0), log(1)]));
        const record = await store.getRun("run_dup");
        assert.equal(record?.source, newRun("run_dup").source);
        assert.equal(record?.journalLength, 1);
        assert.equal((await store.readJournal("run_dup")).length, 1);
      });
    });

    void describe("idempotency keys", () => {
      test("a key repeated in a namespace writes nothing and answers the first run; namespaces (and none) keep keys apart", async ({ store }) => {
        assert.deepEqual(await store.createRun(newRun("run_k1", { namespace: "alice", idempotencyKey: "k" }), [started(0)]), { kind: "created" });
        assert.deepEqual(await store.createRun(newRun("run_k2", { namespace: "alice", idempotencyKey: "k", source: "other" }), [started(0), log(1)]), {
          kind: "duplicate",
          runId: "run_k1",
        });
        assert.equal(await store.getRun("run_k2"), undefined);
        assert.deepEqual(await store.readJournal("run_k2"), []);
        assert.deepEqual(await store.createRun(newRun("run_k3", { namespace: "bob", idempotencyKey: "k" }), []), { kind: "created" });
        assert.deepEqual(await store.createRun(newRun("run_k4", { idempotencyKey: "k" }), []), { kind: "created" });
        assert.deepEqual(await store.createRun(newRun("run_k5", { idempotencyKey: "k" }), []), { kind: "duplicate", runId: "run_k4" });
        assert.deepEqual(await store.createRun(newRun("run_k6", { namespace: "alice" }), []), { kind: "created" }, "runs without a key never collide");
        assert.deepEqual(await store.createRun(newRun("run_k7", { namespace: "alice" }), []), { kind: "created" });
        assert.equal((await store.getRunByIdempotencyKey("k", "alice"))?.id, "run_k1");
        assert.equal((await store.getRunByIdempotencyKey("k", "bob"))?.id, "run_k3");
        assert.equal((await store.getRunByIdempotencyKey("k"))?.id, "run_k4");
        assert.equal(await store.getRunByIdempotencyKey("k", "carol"), undefined);
        assert.equal(await store.getRunByIdempotencyKey("other", "alice"), undefined);
        await assert.rejects(store.createRun(newRun("run_k1", { namespace: "alice" }), []), isConflict, "an existing id still conflicts");
      });

      test("of concurrent creations with one key, one is created and the others get its id", async ({ store }) => {
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => store.createRun(newRun(`run_c${i}`, { namespace: "alice", idempotencyKey: "same" }), [started(0)])),
        );
        const created = results.flatMap((result, i) => (result.kind === "created" ? [`run_c${i}`] : []));
        assert.equal(created.length, 1);
        assert.deepEqual(
          results.filter((r) => r.kind === "duplicate"),
          Array.from({ length: 7 }, () => ({ kind: "duplicate", runId: created[0] })),
        );
        assert.deepEqual(
          (await store.listRuns({ namespace: "alice" })).map((r) => r.id),
          created,
        );
      });

      test("listRuns({ expiredBy }) lists the runs not ended whose expiry has come, soonest first", async ({ store }) => {
        await store.createRun(newRun("run_e3", { status: "waiting", expiresAt: 300 }), []);
        await store.createRun(newRun("run_e1", { status: "running", expiresAt: 100 }), []);
        await store.createRun(newRun("run_e2", { status: "queued", expiresAt: 200 }), []);
        await store.createRun(newRun("run_later", { status: "waiting", expiresAt: 900 }), []);
        await store.createRun(newRun("run_never", { status: "waiting" }), []);
        await store.createRun(newRun("run_done", { status: "running", expiresAt: 50 }), []);
        await store.append("run_done", [], { status: "completed", output: 1, updatedAt: 60 });
        assert.deepEqual(
          (await store.listRuns({ expiredBy: 300 })).map((r) => r.id),
          ["run_e1", "run_e2", "run_e3"],
        );
        assert.deepEqual(
          (await store.listRuns({ expiredBy: 150, limit: 5 })).map((r) => r.id),
          ["run_e1"],
        );
        assert.deepEqual(await store.listRuns({ expiredBy: 99 }), []);
      });
    });

    void describe("append", () => {
      test("continues the indices and round-trips every entry kind exactly", async ({ store }) => {
        await store.createRun(newRun("run_a"), [started(0)]);
        const entries = everyKind(1);
        await store.append("run_a", entries.slice(0, 3));
        await store.append("run_a", entries.slice(3));
        assert.deepEqual(await store.readJournal("run_a"), [started(0), ...entries]);
        assert.equal((await store.getRun("run_a"))?.journalLength, 1 + entries.length);
      });

      test("a wrong first index is a StoreConflictError and writes nothing", async ({ store }) => {
        await store.createRun(newRun("run_c"), [started(0)]);
        await store.append("run_c", [log(1)]);
        const patch = { status: "completed", output: "x", updatedAt: 99 } as const;
        await assert.rejects(store.append("run_c", [log(1)], patch), isConflict); // taken
        await assert.rejects(store.append("run_c", [log(3)], patch), isConflict); // a gap
        await assert.rejects(store.append("run_c", [log(2), log(4)], patch), isConflict); // gap inside
        // The same without a patch: an append that ends nothing checks and bumps the length otherwise.
        await assert.rejects(store.append("run_c", [log(1)]), isConflict);
        await assert.rejects(store.append("run_c", [log(3)]), isConflict);
        await assert.rejects(store.append("run_c", [log(2), log(4)]), isConflict);
        assert.deepEqual(await store.readJournal("run_c"), [started(0), log(1)]);
        const record = await store.getRun("run_c");
        assert.equal(record?.status, "queued");
        assert.equal(record?.journalLength, 2);
        assert.equal(record?.output, undefined);
      });

      test("a conflict in a batch fails only its own append", async ({ store }) => {
        await Promise.all(["run_x", "run_y", "run_z"].map((id) => store.createRun(newRun(id), [started(0)])));
        const results = await Promise.allSettled([
          store.append("run_x", [log(1)]),
          store.append("run_y", [log(5)]),
          store.append("run_z", [log(1)]),
          store.append("run_x", [log(1)]), // a second writer of run_x, same index: loses
        ]);
        assert.deepEqual(
          results.map((r) => r.status),
          ["fulfilled", "rejected", "fulfilled", "rejected"],
        );
        for (const result of results) if (result.status === "rejected") assert.ok(isConflict(result.reason));
        assert.deepEqual(await store.readJournal("run_x"), [started(0), log(1)]);
        assert.deepEqual(await store.readJournal("run_y"), [started(0)]);
        assert.deepEqual(await store.readJournal("run_z"), [started(0), log(1)]);
      });

      test("an append that fails part-way writes nothing; its batch-mates commit", async ({ store }) => {
        await Promise.all(["run_h", "run_i"].map((id) => store.createRun(newRun(id), [started(0)])));
        const results = await Promise.allSettled([
          store.append("run_h", [log(1), unserializable(2)], { status: "running", updatedAt: 5 }),
          store.append("run_i", [log(1)]),
        ]);
        assert.deepEqual(
          results.map((r) => r.status),
          ["rejected", "fulfilled"],
        );
        assert.deepEqual(await store.readJournal("run_h"), [started(0)]);
        assert.equal((await store.getRun("run_h"))?.status, "queued");
        assert.deepEqual(await store.readJournal("run_i"), [started(0), log(1)]);
        await store.append("run_h", [log(1)]);
      });

      test("an append without a patch that fails part-way writes nothing, alone in its batch too", async ({ store }) => {
        await store.createRun(newRun("run_j"), [started(0)]);
        await assert.rejects(store.append("run_j", [log(1), unserializable(2)]));
        assert.deepEqual(await store.readJournal("run_j"), [started(0)]);
        assert.equal((await store.getRun("run_j"))?.journalLength, 1);
        await store.append("run_j", [log(1)]);
        assert.equal((await store.getRun("run_j"))?.journalLength, 2);
      });

      test("appends of many runs issued together all land", async ({ store }) => {
        const ids = Array.from({ length: 50 }, (_, i) => `run_many_${i}`);
        await Promise.all(ids.map((id) => store.createRun(newRun(id), [started(0)])));
        await Promise.all(ids.map((id) => store.append(id, [log(1), log(2)], { status: "running", updatedAt: 7 })));
        for (const id of ids) {
          assert.deepEqual(await store.readJournal(id), [started(0), log(1), log(2)]);
          const record = await store.getRun(id);
          assert.equal(record?.journalLength, 3);
          assert.equal(record?.status, "running");
        }
      });

      test("appends to one run issued together, in order, all land", async ({ store }) => {
        await store.createRun(newRun("run_seq"), [started(0)]);
        const entries = Array.from({ length: 30 }, (_, i) => log(i + 1));
        await Promise.all(entries.map((entry) => store.append("run_seq", [entry])));
        assert.deepEqual(await store.readJournal("run_seq"), [started(0), ...entries]);
        assert.equal((await store.getRun("run_seq"))?.journalLength, 31);
      });

      test("a patch updates status, output, error and updatedAt with the entries", async ({ store }) => {
        await store.createRun(newRun("run_ok"), [started(0)]);
        await store.append("run_ok", [log(1)], { status: "running", updatedAt: 10 });
        let record = await store.getRun("run_ok");
        assert.equal(record?.status, "running");
        assert.equal(record?.updatedAt, 10);
        assert.equal(record?.journalLength, 2);
        assert.ok(record && !("output" in record) && !("error" in record));

        await store.append("run_ok", [], { updatedAt: 11 }); // a patch alone; status kept
        await store.append("run_ok", [], { status: "completed", output: null, updatedAt: 12 });
        record = await store.getRun("run_ok");
        assert.equal(record?.status, "completed");
        assert.equal(record?.updatedAt, 12);
        assert.equal(record?.journalLength, 2);
        assert.ok(record && "output" in record && record.output === null);

        await store.createRun(newRun("run_bad"), [started(0)]);
        await store.append("run_bad", [failed(1)], { status: "failed", error: runError, updatedAt: 13 });
        record = await store.getRun("run_bad");
        assert.equal(record?.status, "failed");
        assert.deepEqual(record?.error, runError);
      });
    });

    void describe("readJournal", () => {
      test("pages with from and limit", async ({ store }) => {
        const entries = [started(0), ...Array.from({ length: 9 }, (_, i) => log(i + 1))];
        await store.createRun(newRun("run_p"), entries);
        assert.deepEqual(await store.readJournal("run_p", 3, 4), entries.slice(3, 7));
        assert.deepEqual(await store.readJournal("run_p", 8), entries.slice(8));
        assert.deepEqual(await store.readJournal("run_p", 0, 2), entries.slice(0, 2));
        assert.deepEqual(await store.readJournal("run_p", 10), []);
        assert.deepEqual(await store.readJournal("run_unknown"), []);
      });
    });

    void describe("listRuns", () => {
      const runs = [
        newRun("r3", { createdAt: 3000, status: "waiting", namespace: "bob", labels: { env: "prod", team: "b" } }),
        newRun("r1", { createdAt: 1000, status: "completed", namespace: "alice", labels: { env: "prod", team: "a" } }),
        newRun("r5", { createdAt: 5000, status: "failed", namespace: "bob", labels: { env: "prod", team: "a", "dotted.key": 'it"s' } }),
        newRun("r2", { createdAt: 2000, status: "running", namespace: "alice", labels: { env: "dev" } }),
        newRun("r4", { createdAt: 4000, status: "running" }),
      ];
      const list = async (store: Store, query?: Parameters<Store["listRuns"]>[0]): Promise<string[]> => (await store.listRuns(query)).map((run) => run.id);

      test("filters by status, labels (all must match) and namespace, newest first", async ({ store }) => {
        await Promise.all(runs.map((run) => store.createRun(run, [])));
        assert.deepEqual(await list(store), ["r5", "r4", "r3", "r2", "r1"]);
        assert.deepEqual(await list(store, { status: ["running"] }), ["r4", "r2"]);
        assert.deepEqual(await list(store, { status: ["running", "waiting"] }), ["r4", "r3", "r2"]);
        assert.deepEqual(await list(store, { labels: { env: "prod" } }), ["r5", "r3", "r1"]);
        assert.deepEqual(await list(store, { labels: { env: "prod", team: "a" } }), ["r5", "r1"]);
        assert.deepEqual(await list(store, { labels: { "dotted.key": 'it"s' } }), ["r5"]);
        assert.deepEqual(await list(store, { labels: { env: "staging" } }), []);
        assert.deepEqual(await list(store, { namespace: "alice" }), ["r2", "r1"]);
        assert.deepEqual(await list(store, { namespace: "bob", status: ["completed", "failed"], labels: { team: "a" } }), ["r5"]);
        assert.deepEqual(await list(store, { limit: 2 }), ["r5", "r4"]);
        const [newest] = await store.listRuns({ limit: 1 });
        assert.deepEqual(newest, { ...runs[2], updatedAt: newest?.updatedAt, journalLength: 0 });
      });

      test("returns at most 100 runs by default", async ({ store }) => {
        const many = Array.from({ length: 105 }, (_, i) => newRun(`run_${i}`, { createdAt: i }));
        await Promise.all(many.map((run) => store.createRun(run, [])));
        const listed = await list(store);
        assert.equal(listed.length, 100);
        assert.equal(listed[0], "run_104");
        assert.equal(listed[99], "run_5");
      });
    });

    void describe("waits", () => {
      const sleep = { kind: "sleep", seq: 1, until: 5_000 } as const;
      const approval = { kind: "approval", seq: 2, tool: "github.merge", args: { pr: 7 } } as const;

      test("a patch sets, keeps and clears waits and wakeAt", async ({ store }) => {
        await store.createRun(newRun("run_w", { status: "running" }), [started(0)]);
        await store.append("run_w", [], { status: "waiting", updatedAt: 10, waits: [sleep, approval], wakeAt: 5_000 });
        let run = await store.getRun("run_w");
        assert.deepEqual([run?.status, run?.waits, run?.wakeAt], ["waiting", [sleep, approval], 5_000]);
        await store.append("run_w", [log(1)], { updatedAt: 11 });
        run = await store.getRun("run_w");
        assert.deepEqual([run?.waits, run?.wakeAt, run?.journalLength], [[sleep, approval], 5_000, 2]);
        await store.append("run_w", [], { status: "running", updatedAt: 12, waits: null, wakeAt: null });
        run = await store.getRun("run_w");
        assert.equal(run?.waits, undefined);
        assert.equal(run?.wakeAt, undefined);
      });

      test("due runs are listed by wake time; nextWakeAt is the earliest waiting one", async ({ store }) => {
        assert.equal(await store.nextWakeAt(), undefined);
        for (const [id, wakeAt, status] of [
          ["run_late", 9_000, "waiting"],
          ["run_soon", 3_000, "waiting"],
          ["run_mid", 5_000, "waiting"],
          ["run_gone", 1_000, "cancelled"],
        ] as const) {
          await store.createRun(newRun(id, { status: "running" }), [started(0)]);
          await store.append(id, [], { status, updatedAt: 1, waits: [{ ...sleep, until: wakeAt }], wakeAt });
        }
        assert.equal(await store.nextWakeAt(), 3_000);
        assert.equal(await store.nextWakeAt({ after: 3_000 }), 5_000);
        assert.equal(await store.nextWakeAt({ owner: "eng_x" }), undefined);
        await store.claimRun("run_mid", "eng_x", 99_999, 0);
        assert.equal(await store.nextWakeAt({ owner: "eng_x" }), 5_000);
        assert.deepEqual(
          (await store.listRuns({ wakeBy: 5_000 })).map((r) => r.id),
          ["run_soon", "run_mid"],
        );
        assert.deepEqual(await store.listRuns({ wakeBy: 2_999 }), []);
      });

      test("a patch's wakeRun brings the wake time of another waiting run forward, in its commit; never a running or ended one", async ({ store }) => {
        const child = { kind: "child", seq: 2, runId: "run_child", workflow: "triage" } as const;
        for (const [id, status, wakeAt] of [
          ["run_parked", "waiting", null],
          ["run_later", "waiting", 9_000],
          ["run_sooner", "waiting", 100],
          ["run_live", "running", null],
        ] as const) {
          await store.createRun(newRun(id, { status: "running" }), [started(0)]);
          await store.append(id, [], { status, updatedAt: 1, waits: [child], wakeAt });
        }
        await store.createRun(newRun("run_child", { status: "running", caller: { runId: "run_parked", seq: 2 } }), [started(0)]);
        await assert.rejects(store.append("run_child", [started(5)], { status: "completed", output: 1, updatedAt: 500, wakeRun: "run_parked" }), isConflict);
        assert.equal((await store.getRun("run_parked"))?.wakeAt, undefined, "nothing of a conflicting batch is written");
        await store.append("run_child", [log(1)], { status: "completed", output: 1, updatedAt: 500, wakeRun: "run_parked" });
        assert.equal((await store.getRun("run_parked"))?.wakeAt, 500);
        assert.deepEqual(
          (await store.listRuns({ wakeBy: 500 })).map((r) => r.id),
          ["run_sooner", "run_parked"],
        );
        for (const id of ["run_later", "run_sooner", "run_live"]) await store.append("run_child", [], { updatedAt: 600, wakeRun: id });
        assert.deepEqual(
          await Promise.all(["run_later", "run_sooner", "run_live"].map(async (id) => (await store.getRun(id))?.wakeAt)),
          [600, 100, undefined],
          "brought forward, never pushed back, and only while waiting",
        );
      });

      test("runs with a call waiting for a decision are listed, others are not", async ({ store }) => {
        await store.createRun(newRun("run_a", { status: "running" }), [started(0)]);
        await store.createRun(newRun("run_b", { status: "running" }), [started(0)]);
        await store.append("run_a", [], { updatedAt: 1, waits: [approval] });
        await store.append("run_b", [], { updatedAt: 1, waits: [sleep] });
        assert.deepEqual(
          (await store.listRuns({ needsDecision: true })).map((r) => r.id),
          ["run_a"],
        );
        await store.append("run_a", [], { updatedAt: 2, waits: [] });
        assert.deepEqual(await store.listRuns({ needsDecision: true }), []);
      });
    });

    void describe("durability", () => {
      test("what was written is there after close and reopen", async ({ store, reopen }, t) => {
        if (reopen === undefined) return t.skip("this store keeps nothing across opens");
        const run = newRun("run_d", { labels: { k: "v" } });
        await store.putToolset(toolset);
        await store.createRun(run, [started(0)]);
        await store.append("run_d", everyKind(1), { status: "waiting", updatedAt: 50 });
        await store.close();

        const again = await reopen();
        assert.deepEqual(await again.getToolset(toolset.id), toolset);
        assert.deepEqual(await again.getRun("run_d"), { ...run, status: "waiting", updatedAt: 50, journalLength: 13 });
        assert.deepEqual(await again.readJournal("run_d"), [started(0), ...everyKind(1)]);
        await again.append("run_d", [log(13)]);
        assert.deepEqual(await again.readJournal("run_d", 13), [log(13)]);
      });

      test("close commits the appends still queued", async ({ store, reopen }) => {
        await store.createRun(newRun("run_q"), [started(0)]);
        const queued = [store.append("run_q", [log(1)]), store.append("run_q", [log(2)])];
        await store.close();
        await Promise.all(queued); // settled by close, or this test times out
        if (reopen === undefined) return;
        const again = await reopen();
        assert.deepEqual(await again.readJournal("run_q"), [started(0), log(1), log(2)]);
      });
    });
  });
}
