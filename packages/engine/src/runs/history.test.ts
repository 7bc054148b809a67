import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry, JournalEvent } from "@tapedeck/protocol";
import { ENGINE_STOPPED, readHistory, REPLAY_VERSION } from "./history.js";

/** A journal from its events, numbered and timed as the engine writes them. */
function journal(...events: JournalEvent[]): JournalEntry[] {
  return events.map((event, index) => ({ index, at: 1_000 + index, ...event }));
}

const started: JournalEvent = { kind: "run.started", input: null, replayVersion: REPLAY_VERSION };
const scheduled: JournalEvent = { kind: "call.scheduled", seq: 1, tool: "crm.update", args: {}, key: "run_1/1" };
const stopped = (attempt: number): JournalEvent => ({ kind: "call.attempt", seq: 1, attempt, reason: ENGINE_STOPPED });

describe("readHistory: a call's attempts", () => {
  it("counts the engine's stops among them apart from the call's own failures", () => {
    const history = readHistory("run_1", journal(started, scheduled, stopped(2), { kind: "call.attempt", seq: 1, attempt: 3, reason: "HTTP 503" }, stopped(4)));
    const call = history.calls.get(1)!;
    assert.equal(call.attempts, 4);
    assert.equal(call.stops, 2);
  });

  it("counts afresh from an approval after a park: the approved call was sent again from attempt 1", () => {
    // Three engine stops, then the source parked it (its credential expired) and the harness
    // approved it with a renewed one; the live engine then sends attempt 1 and counts from there.
    const parked: JournalEvent = { kind: "call.parked", seq: 1, reason: "credentials.expired", message: "renew crm_token", credential: "crm_token" };
    const approved: JournalEvent = { kind: "call.decided", seq: 1, decision: "approved" };
    const beforeAnyAttempt = readHistory("run_1", journal(started, scheduled, stopped(2), stopped(3), stopped(4), parked, approved)).calls.get(1)!;
    assert.equal(beforeAnyAttempt.attempts, 1, "a restart right after the approval resumes attempt 1, the one the live engine sent");
    assert.equal(beforeAnyAttempt.stops, 0, "stops before the park do not widen the attempts allowed after it");
    const afterOneStop = readHistory("run_1", journal(started, scheduled, stopped(2), stopped(3), stopped(4), parked, approved, stopped(2))).calls.get(1)!;
    assert.equal(afterOneStop.attempts, 2);
    assert.equal(afterOneStop.stops, 1);
  });

  it("keeps the count when a parked call is rejected", () => {
    const parked: JournalEvent = { kind: "call.parked", seq: 1, reason: "credentials.expired", message: "renew crm_token" };
    const rejected: JournalEvent = { kind: "call.decided", seq: 1, decision: "rejected", reason: "not now" };
    const call = readHistory("run_1", journal(started, scheduled, stopped(2), parked, rejected)).calls.get(1)!;
    assert.equal(call.attempts, 2);
    assert.equal(call.stops, 1);
  });
});
