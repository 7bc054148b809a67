import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SubCallAnswer } from "@tapedeck/protocol";
import { systemClock } from "../clock.js";
import { RunSubCalls } from "./run-sub-calls.js";

/**
 * A call's sub-call journal answers a recorded answer only once its commit is durable, to every
 * attempt of the call: a retry in the same execution never acts on an answer that may be lost.
 */
describe("a call's sub-call journal", () => {
  const answer: SubCallAnswer = { ok: true, value: { status: 200 }, at: 1 };
  const call = { key: "run_x/3.1", tool: "http.fetch", args: { url: "https://api.example.com/" } };

  it("answers a recorded answer once its commit is durable; a failed commit is never answered", async () => {
    let commit!: () => void;
    let refuse!: (error: Error) => void;
    const commits = [new Promise<void>((resolve) => (commit = resolve)), new Promise<void>((_resolve, reject) => (refuse = reject))];
    const appended: unknown[] = [];
    const journal = {
      append: (events: readonly unknown[]) => {
        appended.push(...events);
        return commits[appended.length - 1]!;
      },
    };
    const answers = new Map<string, SubCallAnswer>();
    const writing = new Map<string, Promise<void>>();
    const first = new RunSubCalls(3, journal, systemClock, answers, undefined, writing);
    const recording = first.record(call, answer);
    // Another attempt of the same call (a new journal object, the same shared maps).
    const second = new RunSubCalls(3, journal, systemClock, answers, undefined, writing);
    let answered: SubCallAnswer | undefined;
    const asked = second.recorded(call.key).then((found) => (answered = found));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, undefined, "not answered while its commit is not durable");
    commit();
    await recording;
    await asked;
    assert.deepEqual(answered, answer);
    assert.equal(await second.recorded("run_x/3.9"), undefined, "a key never recorded has no answer");
    assert.equal(appended.length, 1, "recorded once");

    const lost = { ...call, key: "run_x/3.2" };
    const failing = first.record(lost, answer);
    refuse(new Error("disk full"));
    await assert.rejects(failing, /disk full/);
    await assert.rejects(second.recorded(lost.key), /disk full/, "an answer whose commit failed must not be acted on");
  });
});
