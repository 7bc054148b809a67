import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import type { Store } from "./store/store.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { PostgresStore, postgresHandle } from "./store/postgres/postgres-store.js";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "./store/contracts/postgres-test-database.js";
import { newRun, started } from "./store/contracts/fixtures.js";

/**
 * The proof of an end user's erasure (issue 27): a unique marker is written through every path
 * that keeps data of a namespace — script input and output, tool arguments and results, logs,
 * signals, library files and memory, a namespace credential, a rate-limit window, a host task, a
 * schedule, a direct session's spilled result and sealed arguments, a webhook binding — for two
 * namespaces. One is erased; then every byte of every file (the SQLite database, its WAL and SHM,
 * the memory database, the library's workspaces) and, on PostgreSQL, every row of every table as
 * text is searched for its marker and its name: no hit, while the other namespace's marker is
 * still found where it was written (the search finds what is there).
 */

/** Lower-case letters and digits ending in digits: full-text indexing keeps it whole (no stemming of a suffix). */
const marker = (): string => `mk${randomBytes(8).toString("hex")}x9`;

const TOOLSET = { library: { files: { mode: "rw" }, memory: {} } } as const;

const SCRIPT = `import { files, memory } from "tapedeck:tools";
export default async (input: { marker: string }) => {
  console.log("log " + input.marker);
  await files.write({ path: "notes/" + input.marker + ".txt", content: "file " + input.marker });
  const read = await files.read({ path: "notes/" + input.marker + ".txt" });
  await memory.write({ path: "people/" + input.marker + ".md", content: "memory " + input.marker });
  const got = await signal("go");
  return { read, got, output: "output " + input.marker };
};`;

interface Written {
  readonly namespace: string;
  readonly marker: string;
  readonly waiting: string;
}

/** Writes `marker` through every path, in `namespace`. */
async function writeEverywhere(engine: Engine, store: Store, toolset: string, namespace: string, m: string): Promise<Written> {
  const done = await engine.start({ toolset, source: SCRIPT, namespace, input: { marker: m } });
  if (done.kind !== "started") return assert.fail(`refused: ${JSON.stringify(done)}`);
  await engine.settled(done.runId);
  await engine.signal(done.runId, "go", { payload: `signal ${m}` });
  assert.equal((await done.end).status, "completed");
  const waiting = await engine.start({ toolset, source: `export default async (input: unknown) => signal("never");`, namespace, input: { marker: m } });
  if (waiting.kind !== "started") return assert.fail("refused");
  await engine.settled(waiting.runId);
  await store.putWebhook({ tokenHash: `hash_${m}`, runId: waiting.runId, name: `hook ${m}`, createdAt: 1 });
  const credential = { name: "TOKEN", kind: "bearer", hosts: ["a.example"], keyId: "k", iv: "aXY", sealed: `sealed ${m}`, createdAt: 1, updatedAt: 1 } as const;
  await store.credentials.put({ ...credential, scopeKey: JSON.stringify(["namespace", toolset, namespace]) });
  await store.rateLimits?.take(JSON.stringify([namespace, "files.write"]), [{ ms: 60_000, limit: 10 }], Date.now());
  await store.hostTasks.enqueue({
    id: `task_${m}`,
    // Of the ended run: the cancel of the waiting one would withdraw its tasks itself.
    runId: done.runId,
    seq: 1,
    attempt: 1,
    tool: "shop.charge",
    args: { note: `task ${m}` },
    idempotencyKey: `${done.runId}/1`,
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    heartbeatTimeoutMs: 30_000,
    audience: { namespace, toolsets: [toolset] },
    waiter: "eng_a",
    createdAt: 1,
  });
  await engine.schedules.create({ toolset, source: `export default async (input: unknown) => input;`, everyMs: 3_600_000, namespace, input: { marker: m } });
  // A direct session, idle, with a spilled result and sealed arguments.
  const session = `ses_${randomBytes(16).toString("hex")}`;
  await store.createRun(newRun(session, { createdAt: 1, status: "running", namespace, input: { marker: m } }), [started(0)]);
  await store.append(session, [{ index: 1, at: 2, kind: "log", level: "info", message: `session ${m}` }], { status: "waiting", updatedAt: 2 });
  await store.directBlobs?.put(session, "blob_result", `spilled ${m}`);
  await store.directBlobs?.put(session, "sealed_args_1", `sealed args ${m}`);
  return { namespace, marker: m, waiting: waiting.runId };
}

/** Every file under `dir` that holds `text` byte for byte, with how many times. */
function filesHolding(dir: string, text: string): string[] {
  const needle = Buffer.from(text, "utf8");
  const hits: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path).includes(needle)) hits.push(path);
  }
  return hits;
}

/** Erases one of two namespaces written everywhere; `search(text)` answers where `text` is still found. */
async function eraseLeavesNothing(
  store: Store,
  libraryFolder: string | undefined,
  compacts: boolean,
  search: (text: string) => Promise<string[]>,
): Promise<void> {
  const engine = await Engine.open({ store, wake: false, ...(libraryFolder === undefined ? {} : { libraryFolder }) });
  try {
    const { id: toolset } = await engine.registerToolset(TOOLSET);
    const alice = await writeEverywhere(engine, store, toolset, `alice-${marker()}`, marker());
    const bob = await writeEverywhere(engine, store, toolset, `bob-${marker()}`, marker());
    for (const text of [alice.marker, alice.namespace, bob.marker]) assert.ok((await search(text)).length > 0, `${text} is written before the erasure`);

    const dry = await engine.eraseNamespace(alice.namespace, { dryRun: true });
    assert.deepEqual(dry.cancelled, [alice.waiting], "the dry run names the run cancel would cancel");
    assert.ok((await search(alice.marker)).length > 0, "a dry run deletes nothing");

    const refused = await engine.eraseNamespace(alice.namespace).then(
      () => assert.fail("erased while a run waits"),
      (error: unknown) => error,
    );
    assert.ok(EngineError.is(refused) && refused.code === "conflict");
    assert.match(refused.message, new RegExp(`${alice.waiting} \\(waiting\\).*Nothing was erased: pass cancel`));
    assert.equal((await engine.getRun(alice.waiting)).status, "waiting");

    const erased = await engine.eraseNamespace(alice.namespace, { cancel: true, batchSize: 1 });
    const { dryRun: _d, cancelled: _c, batches: _b, compacted: _k, journalEntries, ...counts } = erased;
    const { dryRun: _dd, cancelled: _cc, batches: _bb, compacted: _kk, journalEntries: countedEntries, ...dryCounts } = dry;
    assert.deepEqual(counts, dryCounts, "the dry run counted what was erased");
    assert.equal(journalEntries, countedEntries + 1, "the cancel's entry was erased too");
    assert.deepEqual(erased.cancelled, [alice.waiting]);
    assert.deepEqual(
      { ...counts, namespace: undefined },
      {
        namespace: undefined,
        runs: 2,
        sessions: 1,
        blobs: 1,
        sealedArguments: 1,
        signals: 2,
        requests: 0,
        events: 0,
        hostTasks: 1,
        credentials: 1,
        // The library's own windows (files, memory) and the one written here.
        rateLimitCalls: counts.rateLimitCalls,
        schedules: 1,
        memoryDocuments: 1,
        workspaceFiles: 1,
      },
    );
    assert.ok(erased.batches > 3, "one run per batch");
    assert.ok(counts.rateLimitCalls >= 1);
    assert.equal(erased.compacted, compacts, "SQLite's files are compacted; PostgreSQL's are the server's to recycle");

    for (const text of [alice.marker, alice.namespace]) assert.deepEqual(await search(text), [], `nothing of ${text} is left`);
    assert.deepEqual(await engine.listRuns({ namespace: alice.namespace }), []);
    assert.equal((await engine.listRuns({ namespace: bob.namespace })).length, 3, "the other namespace keeps its runs and session");
    assert.ok((await search(bob.marker)).length > 0, "the other namespace's data is intact");
    assert.equal((await engine.getRun(bob.waiting)).status, "waiting");
    const again = await engine.eraseNamespace(alice.namespace);
    assert.equal(again.runs + again.sessions + again.credentials + again.memoryDocuments, 0, "erasing again finds nothing");
  } finally {
    await engine.close();
  }
}

describe("erasing an end user leaves nothing (SQLite)", () => {
  it("no byte of any file of the data folder holds the erased namespace's marker, and the other namespace is intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-erase-"));
    try {
      const store = SqliteStore.openDataFolder(dir);
      // Searched with the store open: the WAL was truncated by the erasure, not by the close.
      await eraseLeavesNothing(store, undefined, true, (text) => Promise.resolve(filesHolding(dir, text)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres("erasing an end user leaves nothing (PostgreSQL)", (url) => {
  void it("no row of any table as text, and no byte of the library folder, holds the erased namespace's marker", async () => {
    const schema = freshSchemaName();
    const library = mkdtempSync(join(tmpdir(), "tapedeck-erase-lib-"));
    try {
      const store = await PostgresStore.open(schemaUrl(url, schema));
      const handle = postgresHandle(store) ?? assert.fail("PostgreSQL");
      await eraseLeavesNothing(store, library, false, async (text) => {
        const tables = await handle.read<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [handle.schema]);
        const hits: string[] = [];
        for (const { table_name } of tables) {
          const rows = await handle.read<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
          if (rows.some((r) => r.row.includes(text))) hits.push(table_name);
        }
        return [...hits, ...filesHolding(library, text)];
      });
    } finally {
      await dropSchema(url, schema);
      rmSync(library, { recursive: true, force: true });
    }
  });
});

describe("erasing an end user with a direct session live in the engine", () => {
  it("lets go of the idle live session, erases its record, and a later bind in the namespace starts afresh", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tapedeck-erase-session-"));
    const engine = await Engine.open({ store: SqliteStore.openDataFolder(dir), wake: false });
    try {
      const { id: toolset } = await engine.registerToolset({ library: { echo: {} } });
      const ref = { session: "chat-1", namespace: "carol" };
      const first = await engine.direct.bind(ref, { toolset });
      assert.equal(engine.direct.openSessions, 1);
      const bound = (await engine.journal(first.id)).length;
      const erased = await engine.eraseNamespace("carol");
      assert.deepEqual([erased.sessions, erased.cancelled], [1, []]);
      assert.equal(engine.direct.openSessions, 0, "the live session was let go");
      assert.equal(await engine.direct.find(ref), undefined);
      const again = await engine.direct.bind(ref, { toolset });
      assert.equal(again.id, first.id, "the same record id, made anew");
      assert.equal((await engine.journal(again.id)).length, bound, "a fresh journal, as long as the first bind's");
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
