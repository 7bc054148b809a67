import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { after, it } from "node:test";
import Database from "better-sqlite3";
import { SqliteMemoryStore } from "./sqlite-memory-store.js";
import { describeMemoryStoreContract } from "./test-support/memory-store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "tapedeck-memory-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describeMemoryStoreContract("SQLite", () => {
  const file = join(dir, `memory-${n++}.db`);
  let db = new Database(file);
  return Promise.resolve({
    store: new SqliteMemoryStore(db),
    reopen: () => {
      db.close();
      db = new Database(file);
      return Promise.resolve(new SqliteMemoryStore(db));
    },
    close: () => Promise.resolve(void db.close()),
  });
});

/** The schema before each namespace had an index of its own (user_version 0): one index, kept by triggers. */
const SHARED_INDEX_SCHEMA = `
  CREATE TABLE memory_documents (namespace TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (namespace, path)) WITHOUT ROWID;
  CREATE TABLE memory_chunks (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, path TEXT NOT NULL, idx INTEGER NOT NULL, text TEXT NOT NULL, model TEXT, embedding BLOB, UNIQUE (namespace, path, idx));
  CREATE VIRTUAL TABLE memory_chunks_fts USING fts5(path, text, content = 'memory_chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2');
  CREATE TRIGGER memory_chunks_ai AFTER INSERT ON memory_chunks BEGIN INSERT INTO memory_chunks_fts (rowid, path, text) VALUES (new.id, new.path, new.text); END;
`;

it("a memory database of the shared index is moved to an index per namespace when opened: everything is found as before, and writes go on", async () => {
  const file = join(dir, "shared-index.db");
  const old = new Database(file);
  old.exec(SHARED_INDEX_SCHEMA);
  for (const [ns, path, text] of [
    ["alice", "a.md", "kiwi orchards in the valley"],
    ["bob", "b.md", "kiwi birds at night"],
    ["", "c.md", "kiwi for everyone"],
  ] as const) {
    old.prepare("INSERT INTO memory_documents VALUES (?, ?, ?, 1, 1)").run(ns, path, text);
    old.prepare("INSERT INTO memory_chunks (namespace, path, idx, text) VALUES (?, ?, 0, ?)").run(ns, path, text);
  }
  old.close();
  const db = new Database(file);
  try {
    const store = new SqliteMemoryStore(db);
    assert.equal(db.pragma("user_version", { simple: true }), 1);
    assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE name = 'memory_chunks_fts' OR type = 'trigger'").all(), []);
    for (const [ns, text] of [
      ["alice", "kiwi orchards in the valley"],
      ["bob", "kiwi birds at night"],
      ["", "kiwi for everyone"],
    ] as const) {
      assert.deepEqual(
        (await store.searchText(ns, ["kiwi"], 10)).map((hit) => hit.text),
        [text],
        ns,
      );
    }
    assert.deepEqual(await store.put("alice", { path: "a.md", content: "pears", chunks: [{ text: "pears" }], at: 2, expectedVersion: 1 }), {
      ok: true,
      version: 2,
    });
    assert.deepEqual(await store.searchText("alice", ["kiwi"], 10), [], "the replaced chunk left alice's index");
    assert.deepEqual(
      (await store.searchText("alice", ["pears"], 10)).map((hit) => hit.path),
      ["a.md"],
    );
    // Opened again: already migrated, nothing moves.
    assert.deepEqual(
      (await new SqliteMemoryStore(db).searchText("bob", ["kiwi"], 10)).map((hit) => hit.path),
      ["b.md"],
    );
  } finally {
    db.close();
  }
});
