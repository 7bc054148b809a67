/**
 * The notifier's contract (`notifier.ts`), on the notifier of a store the factory opens: a
 * publish reaches the topic's listeners in this process (never inside `publish`), and those of
 * another process sharing the store; stopping a subscription stops it; a listener that throws
 * does not deafen the others. Public API for store implementers (`@tapedeck/engine/testing`).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { contractTest, eventually, type StoreFactory } from "./contract-test.js";

/** One macrotask: what a publish in this process has had time to deliver by then, it has. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function describeNotifierContract(name: string, open: StoreFactory): void {
  const test = contractTest(open);
  void describe(`Notifier contract: ${name}`, () => {
    test("a publish reaches the listeners of its topic in this process, after publish returns", async ({ store }) => {
      const heard: string[] = [];
      const stops = [
        store.notifier.subscribe("t/a", () => heard.push("a1")),
        store.notifier.subscribe("t/a", () => heard.push("a2")),
        store.notifier.subscribe("t/b", () => heard.push("b")),
      ];
      try {
        store.notifier.publish("t/a");
        assert.equal(heard.length, 0, "never inside publish");
        await eventually("both listeners of t/a to hear it", () => Promise.resolve(heard.includes("a1") && heard.includes("a2")));
      } finally {
        for (const stop of stops) stop();
      }
    });

    test("a stopped subscription hears nothing more; the same function subscribed twice is stopped once per subscription", async ({ store }) => {
      let calls = 0;
      const listener = (): void => void calls++;
      const first = store.notifier.subscribe("t/s", listener);
      const second = store.notifier.subscribe("t/s", listener);
      first();
      first();
      store.notifier.publish("t/s");
      await eventually("the second subscription to hear it", () => Promise.resolve(calls > 0));
      second();
      calls = 0;
      store.notifier.publish("t/s");
      await turn();
      assert.equal(calls, 0);
    });

    test("a listener that throws does not keep the others from hearing", async ({ store }) => {
      let heard = false;
      const stops = [
        store.notifier.subscribe("t/x", () => {
          throw new Error("a listener's own fault");
        }),
        store.notifier.subscribe("t/x", () => (heard = true)),
      ];
      try {
        store.notifier.publish("t/x");
        await eventually("the second listener to hear it", () => Promise.resolve(heard));
      } finally {
        for (const stop of stops) stop();
      }
    });

    test("a publish in another process sharing the store reaches this one's listeners", async ({ store, peer }, t) => {
      if (peer === undefined) return t.skip("nothing else can open this store");
      const other = await peer();
      let heard = false;
      const stop = store.notifier.subscribe("t/peer", () => (heard = true));
      try {
        other.notifier.publish("t/peer");
        await eventually("the publish of another process to arrive", () => Promise.resolve(heard));
      } finally {
        stop();
        await other.close();
      }
    });
  });
}
