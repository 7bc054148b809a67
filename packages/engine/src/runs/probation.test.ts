import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Probation } from "./probation.js";

describe("probation", () => {
  it("gives one run the turn at a time, the least blamed of those waiting next, each once", () => {
    const probation = new Probation();
    const began: string[] = [];
    const enter = (id: string, faults: number): void => probation.enter(id, faults, () => began.push(id));
    enter("a", 2);
    enter("b", 2);
    enter("c", 3);
    enter("d", 1);
    enter("b", 2); // queued already: once
    assert.deepEqual(began, ["a"], "the first to come has the turn; the others wait");
    probation.leave("c"); // not its turn: it leaves the queue
    probation.leave("a");
    assert.deepEqual(began, ["a", "d"], "the least blamed next");
    probation.leave("d");
    assert.deepEqual(began, ["a", "d", "b"]);
    probation.leave("b");
    probation.leave("b"); // a turn ends once
    assert.deepEqual(began, ["a", "d", "b"]);
    enter("e", 5);
    assert.deepEqual(began, ["a", "d", "b", "e"], "nobody has the turn: at once");
  });

  it("is for runs interrupted by crashes twice running", () => {
    assert.equal(Probation.needs(undefined), false);
    assert.equal(Probation.needs({ count: 0, crashes: 0 }), false);
    assert.equal(Probation.needs({ count: 1, crashes: 0 }), false, "a fault the engine threw, no crash");
    assert.equal(Probation.needs({ count: 1, crashes: 1 }), true);
  });
});
