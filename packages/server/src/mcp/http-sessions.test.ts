import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { McpSessions } from "./http-sessions.js";

/** `/mcp`'s session registry on a manual clock: the bounds (all, per owner), idle expiry, and a request in flight keeping its session. */
function registry(maxSessions: number, idleMs: number, maxPerOwner = 100) {
  let now = 0;
  const closed: string[] = [];
  const sessions = new McpSessions<{ close(): Promise<void> }>({ maxSessions, maxPerOwner, idleMs }, () => now);
  const open = (id: string, owner = "k"): string => {
    const place = sessions.reserve(owner);
    if (place === "ok") sessions.add(id, owner, { close: () => (closed.push(id), Promise.resolve()) });
    return place;
  };
  return { sessions, closed, open, advance: (ms: number) => (now += ms) };
}

describe("the MCP session registry", () => {
  it("refuses a session past the bound, counting those still opening, and frees a place when one is given back", () => {
    const { sessions, open } = registry(2, 60_000);
    assert.equal(open("a"), "ok");
    assert.equal(sessions.reserve("k"), "ok", "the second place, held while it opens");
    assert.equal(sessions.reserve("other"), "server", "two open or opening: the bound");
    sessions.release("k");
    assert.equal(open("b"), "ok");
    assert.equal(open("c"), "server");
    sessions.forget("a");
    assert.equal(open("c"), "ok");
    assert.equal(sessions.size, 2);
  });

  it("one owner's flood stops at its own bound and leaves room for the others", () => {
    const { sessions, open } = registry(10, 60_000, 2);
    assert.equal(open("a1", "alice"), "ok");
    assert.equal(open("a2", "alice"), "ok");
    assert.equal(open("a3", "alice"), "owner");
    assert.equal(open("b1", "bob"), "ok");
    sessions.forget("a1");
    assert.equal(open("a3", "alice"), "ok", "a closed session gives its owner a place back");
    assert.equal(sessions.size, 3);
  });

  it("closes a session idle for idleMs, never one with a request in flight, and a full registry sweeps before refusing", () => {
    const { sessions, closed, open, advance } = registry(2, 1000);
    open("idle");
    open("busy");
    const done = sessions.begin("busy");
    advance(999);
    assert.equal(sessions.sweep(), 0, "not idle long enough");
    advance(1);
    assert.equal(sessions.sweep(), 1);
    assert.deepEqual(closed, ["idle"]);
    assert.equal(sessions.get("idle"), undefined);
    assert.ok(sessions.get("busy"), "a held stream is in use");
    advance(5000);
    assert.equal(sessions.sweep(), 0);
    done();
    assert.equal(open("new"), "ok", "a place was free");
    assert.equal(open("newer"), "server", "busy ended just now: not idle yet");
    advance(1000);
    assert.equal(open("newer"), "ok", "the full registry closed the idle ones first");
    assert.deepEqual(closed, ["idle", "busy", "new"]);
  });
});
