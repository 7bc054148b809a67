import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { McpSessions } from "./http-sessions.js";

/** `/mcp`'s session registry on a manual clock: the bound, idle expiry, and a request in flight keeping its session. */
function registry(maxSessions: number, idleMs: number) {
  let now = 0;
  const closed: string[] = [];
  const sessions = new McpSessions<{ close(): Promise<void> }>({ maxSessions, idleMs }, () => now);
  const open = (id: string): boolean => {
    if (!sessions.reserve()) return false;
    sessions.add(id, { close: () => (closed.push(id), Promise.resolve()) });
    return true;
  };
  return { sessions, closed, open, advance: (ms: number) => (now += ms) };
}

describe("the MCP session registry", () => {
  it("refuses a session past the bound, counting those still opening, and frees a place when one is given back", () => {
    const { sessions, open } = registry(2, 60_000);
    assert.ok(open("a"));
    assert.ok(sessions.reserve(), "the second place, held while it opens");
    assert.equal(sessions.reserve(), false, "two open or opening: the bound");
    sessions.release();
    assert.ok(open("b"));
    assert.equal(open("c"), false);
    sessions.forget("a");
    assert.ok(open("c"));
    assert.equal(sessions.size, 2);
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
    assert.ok(open("new"), "a place was free");
    assert.equal(open("newer"), false, "busy ended just now: not idle yet");
    advance(1000);
    assert.ok(open("newer"), "the full registry closed the idle ones first");
    assert.deepEqual(closed, ["idle", "busy", "new"]);
  });
});
