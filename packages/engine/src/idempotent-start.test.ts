import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { SqliteStore } from "./store/sqlite-store.js";
import type { CreateRunResult, Store } from "./store/store.js";
import { tempDir, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

const WAITING = `export default async () => signal("go");`;

/** An engine whose store counts the creations that lost to an earlier one with the same key. */
async function countingEngine(): Promise<{ engine: Engine; duplicates: () => number; cleanup: () => Promise<void> }> {
  const dir = tempDir();
  const store = SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "off" });
  let duplicates = 0;
  const counting = new Proxy(store, {
    get(target, property, receiver) {
      if (property === "createRun") {
        return async (...args: Parameters<Store["createRun"]>): Promise<CreateRunResult> => {
          const result = await target.createRun(...args);
          if (result.kind === "duplicate") duplicates++;
          return result;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const engine = await Engine.open({ store: counting, sandboxes: { create: (o) => testSandboxes().create(o), close: () => Promise.resolve() } });
  return {
    engine,
    duplicates: () => duplicates,
    cleanup: async () => {
      await engine.close();
      dir.cleanup();
    },
  };
}

describe("idempotent starts and TTLs in the engine", () => {
  it("starts racing with one key make one run; every one answers it and its end", async () => {
    const t = await countingEngine();
    try {
      const { id: toolset } = await t.engine.registerToolset({});
      const results = await Promise.all(Array.from({ length: 5 }, () => t.engine.start({ toolset, source: WAITING, idempotencyKey: "k", namespace: "alice" })));
      const started = results.flatMap((r) => (r.kind === "started" ? [r] : []));
      assert.equal(started.length, 5);
      assert.equal(new Set(started.map((r) => r.runId)).size, 1);
      assert.deepEqual(started.map((r) => r.existing).sort(), [false, true, true, true, true]);
      assert.ok(t.duplicates() > 0, "the race reached the store, which decided it");
      const runId = started[0]!.runId;
      await t.engine.settled(runId);
      await t.engine.signal(runId, "go", 42);
      assert.deepEqual(
        await Promise.all(started.map((r) => r.end)),
        started.map(() => ({ status: "completed", output: 42 })),
      );

      const later = await t.engine.start({ toolset, source: WAITING, idempotencyKey: "k", namespace: "alice" });
      assert.deepEqual(later.kind === "started" && [later.runId, later.existing, await later.end], [runId, true, { status: "completed", output: 42 }]);
      const other = await t.engine.start({ toolset, source: WAITING, idempotencyKey: "k" });
      assert.ok(other.kind === "started" && other.runId !== runId && !other.existing, "no namespace is not alice's");
      await t.engine.cancel(other.kind === "started" ? other.runId : "");
    } finally {
      await t.cleanup();
    }
  });

  it("a ttl sets expiresAt; a fork keeps its parent's ttl unless given; a ttl that is not positive is refused", async () => {
    const t = await countingEngine();
    try {
      const { id: toolset } = await t.engine.registerToolset({});
      const started = await t.engine.start({ toolset, source: `export default () => 1;`, ttlMs: 60_000 });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      await started.end;
      const parent = await t.engine.getRun(started.runId);
      assert.equal(parent.expiresAt! - parent.createdAt, 60_000);
      for (const [ttlMs, expected] of [
        [undefined, 60_000],
        [5_000, 5_000],
      ] as const) {
        const fork = await t.engine.fork({ parent: parent.id, source: `export default () => 2;`, ...(ttlMs === undefined ? {} : { ttlMs }) });
        if (fork.kind !== "started") return assert.fail("refused");
        await fork.end;
        const run = await t.engine.getRun(fork.runId);
        assert.equal(run.expiresAt! - run.createdAt, expected);
      }
      for (const ttlMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        await assert.rejects(t.engine.start({ toolset, source: WAITING, ttlMs }), (e: unknown) => e instanceof EngineError && e.code === "invalid_request");
      }
    } finally {
      await t.cleanup();
    }
  });

  it("a namespace spelt a second way (a space at an end, an invisible character, a compatibility form) is refused, saying what is wrong, and starts nothing", async () => {
    const t = await countingEngine();
    try {
      const { id: toolset } = await t.engine.registerToolset({});
      for (const [namespace, says] of [
        ["alice ", /ends with a space/],
        ["ali\u200bce", /invisible or control character U\+200B/],
        ["ａｌｉｃｅ", /spelled "alice"/],
      ] as const) {
        await assert.rejects(
          t.engine.start({ toolset, source: WAITING, namespace }),
          (e: unknown) => e instanceof EngineError && e.code === "invalid_request" && e.message.startsWith("The run's namespace") && says.test(e.message),
        );
      }
      assert.deepEqual(await t.engine.listRuns(), []);
    } finally {
      await t.cleanup();
    }
  });
});
