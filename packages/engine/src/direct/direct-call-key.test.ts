import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { directCallId, directIdempotencyKey } from "./direct-call-key.js";

describe("the identity of a model tool call", () => {
  it("is the same for the same session, labels (in any order) and tool call id, and differs otherwise", () => {
    const id = directCallId("ses_1", { agent: "support", team: "a" }, "toolu_01");
    assert.match(id, /^dc_[0-9a-f]{64}$/);
    assert.equal(directCallId("ses_1", { team: "a", agent: "support" }, "toolu_01"), id);
    assert.notEqual(directCallId("ses_2", { agent: "support", team: "a" }, "toolu_01"), id);
    assert.notEqual(directCallId("ses_1", { agent: "billing", team: "a" }, "toolu_01"), id);
    assert.notEqual(directCallId("ses_1", { agent: "support", team: "a" }, "toolu_02"), id);
    assert.notEqual(
      directCallId("ses_1", { "agent,team": "a" }, "x"),
      directCallId("ses_1", { agent: "team,a" }, "x"),
      "labels cannot be confused by their spelling",
    );
  });

  it("refuses a missing tool call id, and keys a call {session}/{seq}", () => {
    assert.throws(() => directCallId("ses_1", {}, ""), /needs the model's tool call id/);
    assert.throws(() => directCallId("ses_1", {}, "x".repeat(257)), /needs the model's tool call id/);
    assert.equal(directIdempotencyKey("ses_1", 7), "ses_1/7");
  });
});
