import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { narrow, sees, UNLIMITED } from "./scope.js";

describe("scopes", () => {
  it("an unlimited scope sees every run; a limited one only runs in its namespace carrying its labels", () => {
    const runs: { namespace?: string; labels?: Record<string, string> }[] = [
      {},
      { namespace: "alice" },
      { namespace: "alice", labels: { team: "red", x: "1" } },
      { labels: { team: "red" } },
    ];
    assert.deepEqual(
      runs.map((run) => sees(UNLIMITED, run)),
      [true, true, true, true],
    );
    assert.deepEqual(
      runs.map((run) => sees({ namespace: "alice", labels: {} }, run)),
      [false, true, true, false],
    );
    assert.deepEqual(
      runs.map((run) => sees({ labels: { team: "red" } }, run)),
      [false, false, true, true],
    );
    assert.deepEqual(
      runs.map((run) => sees({ namespace: "alice", labels: { team: "red" } }, run)),
      [false, false, true, false],
    );
  });

  it("narrowing only narrows: it adds a namespace and labels, and refuses to change the scope's", () => {
    assert.deepEqual(narrow(UNLIMITED, { namespace: "bob", labels: { a: "1" } }), { ok: true, scope: { namespace: "bob", labels: { a: "1" } } });
    const alice = { namespace: "alice", labels: { team: "red" } };
    assert.deepEqual(narrow(alice, { labels: { conversation: "c" } }), { ok: true, scope: { namespace: "alice", labels: { conversation: "c", team: "red" } } });
    assert.deepEqual(narrow(alice, { namespace: "alice", labels: { team: "red" } }), { ok: true, scope: alice });
    const other = narrow(alice, { namespace: "bob" });
    assert.ok(!other.ok && /limited to namespace "alice"/.test(other.message));
    const relabel = narrow(alice, { labels: { team: "blue" } });
    assert.ok(!relabel.ok && /team=red/.test(relabel.message));
  });
});
