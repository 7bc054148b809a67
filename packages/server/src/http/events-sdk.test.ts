import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Run, RunStreamItem, Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The SDK's `runs.events` and `runs.follow` against a real server: the iterator resumes by
 * itself with Last-Event-ID across a server restart (whose stop ends the stream cleanly), losing
 * and repeating no entry; `follow` follows a run through an approval, a signal and a sleep to its
 * end, telling its callbacks; both answer a run outside the caller's scope as missing.
 */

const HOST = `export const ops = { deploy: async () => "deployed" };`;
const SPEC = { hostTools: { ops: { deploy: { description: "Deploys.", inputSchema: { type: "object" } } } }, policies: { "ops.deploy": { approval: true } } };

let server: ServeChild;
let admin: Tapedeck;
let adminKey: string;
let toolset: string;

before(async () => {
  server = await startServeChild({ hostModule: HOST });
  adminKey = server.adminKey!;
  admin = server.client(adminKey);
  toolset = (await admin.toolsets.create(SPEC)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(source: string): Promise<string> {
  const started = await admin.runs.start({ toolset, source });
  return started.kind === "started" ? started.run.id : assert.fail(`refused: ${JSON.stringify(started)}`);
}

describe("the SDK's run events", () => {
  it("runs.events resumes by itself across a server restart, losing and repeating no entry", async () => {
    const id = await start(`export default async () => { const a = await signal<number>("go"); const b = await signal<number>("go"); return a + b; };`);
    const iterator = admin.runs.events(id)[Symbol.asyncIterator]();
    const seen: RunStreamItem[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) assert.fail("the stream ended while the run waits");
      const value = next.value;
      seen.push(value);
      if (value.event === "run" && value.data.status === "waiting") break;
    }
    // The server stops under the open stream (it must end it, or the stop would hang), and comes back on the same port.
    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0, server.stderr());
    server = await startServeChild({ dataDir: server.dataDir, port, hostModule: HOST });
    await admin.runs.signal(id, { name: "go", payload: 1 });
    await admin.runs.signal(id, { name: "go", payload: 2 });
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) break;
      seen.push(next.value);
    }
    assert.equal(seen.at(-1)?.event, "end");
    assert.equal((seen.at(-1)?.data as Run).output, 3);
    const entries = seen.filter((item) => item.event === "entry").map((item) => item.data);
    assert.deepEqual(entries, (await admin.runs.journal(id, { limit: 1000 })).entries);
  });

  it("runs.follow follows a run through an approval, a signal and a sleep to its end, telling its callbacks once each", async () => {
    const id = await start(
      `import { ops } from "tapedeck:tools";\nexport default async () => { const deployed = await ops.deploy({}); const n = await signal<number>("go"); await sleep(50); return [deployed, n]; };`,
    );
    const approvals: number[] = [];
    const signals: string[] = [];
    const events: string[] = [];
    const ended = await admin.runs.follow(id, {
      onApproval: async (wait, run) => {
        approvals.push(wait.seq);
        assert.equal(run.id, id);
        await admin.approvals.approve(id, wait.seq, { reason: "looks fine" });
      },
      onSignalWait: async (wait) => {
        signals.push(wait.name);
        await admin.runs.signal(id, { name: "go", payload: 5 });
      },
      onEvent: (event) => events.push(event.event),
    });
    assert.equal(ended.status, "completed");
    assert.deepEqual(ended.output, ["deployed", 5]);
    assert.equal(approvals.length, 1);
    assert.deepEqual(signals, ["go"]);
    assert.equal(events[0], "run");
    assert.equal(events.at(-1), "end");
  });

  it("runs.events and runs.follow answer a run outside the caller's scope as missing", async () => {
    const id = await start(`export default async () => signal<number>("go");`);
    const other = server.client(await createKey(server.dataDir, "--label", "tenant=b"));
    await assert.rejects(other.runs.events(id)[Symbol.asyncIterator]().next(), (error: { status?: number }) => error.status === 404);
    await assert.rejects(other.runs.follow(id), (error: { status?: number }) => error.status === 404);
    await admin.runs.cancel(id, { reason: "done" });
  });

  it("events yields each change of the runs in the caller's scope, resumes by itself across a server restart, and never shows another tenant's run", async () => {
    const a = server.client(await createKey(server.dataDir, "--label", "tenant=a"));
    const b = server.client(await createKey(server.dataDir, "--label", "tenant=b"));
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const stop = new AbortController();
    const changes = a.events({ signal: stop.signal, onOpen: () => opened() })[Symbol.asyncIterator]();
    const first = changes.next();
    await open;
    const source = `export default async () => (await signal<number>("go")) * 2;`;
    const other = await b.runs.start({ toolset, source });
    const mine = await a.runs.start({ toolset, source });
    const otherId = other.kind === "started" ? other.run.id : assert.fail("refused");
    const id = mine.kind === "started" ? mine.run.id : assert.fail("refused");
    const seen: { id: string; run: Run }[] = [];
    let next = await first;
    for (;;) {
      if (next.done === true) assert.fail("the stream ended while the caller iterates");
      seen.push(next.value);
      assert.equal(next.value.run.id, id, "only the runs of the caller's scope");
      if (next.value.run.status === "waiting") break;
      next = await changes.next();
    }
    const port = Number(new URL(server.url).port);
    assert.equal(await server.stop(), 0, server.stderr());
    server = await startServeChild({ dataDir: server.dataDir, port, hostModule: HOST });
    await b.runs.signal(otherId, { name: "go", payload: 1 });
    await a.runs.signal(id, { name: "go", payload: 21 });
    for (;;) {
      next = await changes.next();
      if (next.done === true) assert.fail("the stream ended while the caller iterates");
      seen.push(next.value);
      assert.equal(next.value.run.id, id, "only the runs of the caller's scope");
      if (next.value.run.status === "completed") break;
    }
    stop.abort();
    assert.equal((await changes.next()).done, true, "an aborted iteration ends without an error");
    assert.equal(seen.at(-1)?.run.output, 42);
    assert.equal(new Set(seen.map((change) => change.id)).size, seen.length, "no change is yielded twice");
  });
});
