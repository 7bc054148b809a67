/**
 * What a host tool call served by a worker costs in commits: every commit is on the path of
 * every call of the process (better-sqlite3 commits on the event loop), so a sequential host
 * call must cost the one commit that journals its outcome with the next call's scheduling, the
 * call's task included (`RunPatch.hostTasks`), as with the in-memory queue before the store
 * kept host tasks. Commits are counted as SQLite's group commit makes them: the writes
 * submitted during one event-loop turn share one.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { HostTaskStore } from "../store/host-task-store.js";
import { SqliteStore } from "../store/sqlite-store.js";
import type { Store } from "../store/store.js";
import { HostTaskQueue } from "./host-task-queue.js";
import { harnessToolset } from "../test-support/tool-harness.js";
import { testEngine, testSandboxes } from "../test-support/engines.js";

after(() => testSandboxes().close());

/** The host task store's methods that only read. */
const HOST_TASK_READS = new Set<string>(["get", "find", "list"]);

/** `store`, counting the commits its writes (appends, new runs, host task writes) make: one per event-loop turn that has some. */
function countingCommits(store: SqliteStore): { readonly store: Store; readonly commits: () => number } {
  let commits = 0;
  let inTurn = false;
  const wrote = (): void => {
    if (inTurn) return;
    commits++;
    inTurn = true;
    setImmediate(() => (inTurn = false));
  };
  const counting = <T extends object>(target: T, writes: (name: string) => boolean): T =>
    new Proxy(target, {
      get(object, name, receiver) {
        const value: unknown = Reflect.get(object, name, receiver);
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          if (typeof name === "string" && writes(name)) wrote();
          return method.apply(object, args);
        };
      },
    });
  const hostTasks = counting<HostTaskStore>(store.hostTasks, (name) => !HOST_TASK_READS.has(name));
  const wrapped = counting<Store>(store, (name) => name === "append" || name === "createRun");
  return {
    store: new Proxy(wrapped, { get: (object, name, receiver): unknown => (name === "hostTasks" ? hostTasks : Reflect.get(object, name, receiver)) }),
    commits: () => commits,
  };
}

describe("the commits of host tool calls served by workers", () => {
  it("a sequential host call through a worker's held poll costs one commit: its task and the claim ride the append that schedules it", async () => {
    const sqlite = SqliteStore.open({ path: ":memory:", durability: "off" });
    const { store, commits } = countingCommits(sqlite);
    const queue = new HostTaskQueue(store);
    const t = await testEngine({ store, sources: { host: queue } });
    const engine = t.engine;
    const worker = new AbortController();
    try {
      const { id } = await engine.registerToolset(harnessToolset(["shop.echo"], { policies: { "shop.*": { heartbeatTimeout: "30s" } } }));
      // The worker: a poll held whenever no call is in flight, as the SDK's worker does.
      let served = 0;
      const serving = (async () => {
        while (!worker.signal.aborted) {
          for (const task of await queue.poll({ tools: ["shop.*"], waitMs: 30_000, signal: worker.signal })) {
            assert.equal(await queue.complete(task.id, task.lease, task.args), "ok");
            served++;
          }
        }
      })();
      const calls = 30;
      const before = commits();
      const started = await engine.start({
        toolset: id,
        source: `import { shop } from "tapedeck:tools";\nexport default async () => { let n = 0; for (let i = 0; i < ${calls}; i++) { await shop.echo({ i }); n++; } return n; };`,
      });
      if (started.kind !== "started") throw new Error("refused");
      assert.deepEqual(await started.end, { status: "completed", output: calls });
      const spent = commits() - before;
      assert.equal(served, calls);
      // The run's creation, its first call (the queue reads the run's audience before it stages any), one per call, the end: a few over `calls`.
      assert.ok(spent <= calls + 4, `${calls} sequential host calls cost ${spent} commits; each should cost one (the append that journals it)`);
      worker.abort();
      await serving;
    } finally {
      worker.abort();
      await t.cleanup();
    }
  });
});
