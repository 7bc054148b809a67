import assert from "node:assert/strict";
import { once } from "node:events";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import type { JournalEntry, Run, Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { SseReader, type SseEvent } from "./test-support/sse-reader.js";

/**
 * The live event streams over real HTTP on a real server (SQLite): a dropped connection resumed
 * with Last-Event-ID loses and repeats no entry; a key limited to labels sees no other tenant's
 * run; a client that never reads is dropped with the lost-events notice once the server's bound
 * is reached, instead of growing the server's memory.
 */

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;
let blueKey: string;

/** 1 MB per call: a few dozen calls outgrow the loopback socket's kernel buffers and the server's bound. */
const HOST = `export const ops = { big: async () => "x".repeat(1_000_000), small: async () => "ok" };`;
const SPEC = {
  hostTools: {
    ops: {
      big: { description: "A large answer.", inputSchema: { type: "object" } },
      small: { description: "A small answer.", inputSchema: { type: "object" } },
    },
  },
};

before(async () => {
  server = await startServeChild({ hostModule: HOST });
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create(SPEC)).id;
  blueKey = await createKey(server.dataDir, "--label", "team=blue");
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(source: string, labels: Record<string, string> = { team: "red" }): Promise<string> {
  const started = await admin.runs.start({ toolset, source, labels });
  return started.kind === "started" ? started.run.id : assert.fail("refused");
}

function entriesOf(events: readonly SseEvent[]): JournalEntry[] {
  return events.filter((event) => event.event === "entry").map((event) => event.data as JournalEntry);
}

const isWaiting = (event: SseEvent): boolean => event.event === "run" && (event.data as Run).status === "waiting";

describe("a run's event stream", () => {
  it("resumed with Last-Event-ID after a dropped connection, loses no entry and repeats none", async () => {
    const id = await start(
      `import { ops } from "tapedeck:tools";\nexport default async () => { let n = 0; for (let i = 0; i < 4; i++) { await ops.small({}); n += await signal<number>("go"); } return n; };`,
    );
    const first = await SseReader.open(`${server.url}/v1/runs/${id}/events`, server.adminKey!);
    const before = await first.collect(isWaiting);
    first.close();
    // While no one listens, the run moves on: two signals, and it parks again.
    await admin.runs.signal(id, { name: "go", payload: 1 });
    await admin.runs.get(id, { wait: 30, next: true });
    await admin.runs.signal(id, { name: "go", payload: 2 });
    await admin.runs.get(id, { wait: 30, next: true });
    const last = entriesOf(before).at(-1)!;
    const second = await SseReader.open(`${server.url}/v1/runs/${id}/events`, server.adminKey!, { "last-event-id": String(last.index) });
    await admin.runs.signal(id, { name: "go", payload: 3 });
    await admin.runs.signal(id, { name: "go", payload: 4 });
    const rest = await second.collect();
    assert.equal(rest.at(-1)?.event, "end");
    assert.equal((rest.at(-1)?.data as Run).status, "completed");
    assert.deepEqual((rest.at(-1)?.data as Run).output, 10);
    const streamed = [...entriesOf(before), ...entriesOf(rest)];
    const journal = await admin.runs.journal(id, { limit: 1000 });
    assert.deepEqual(streamed, journal.entries);
    // Each entry event's id is its index, so Last-Event-ID names the entry to resume after.
    for (const event of [...before, ...rest].filter((e) => e.event === "entry")) assert.equal(event.id, String((event.data as JournalEntry).index));
  });

  it("answers a run outside the caller's scope as a missing run", async () => {
    const id = await start(`export default async () => 1;`);
    await admin.runs.get(id, { wait: 30 });
    const ask = async (runId: string): Promise<{ status: number; body: string }> => {
      const response = await fetch(`${server.url}/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${blueKey}` } });
      return { status: response.status, body: (await response.text()).replaceAll(runId, "<run>") };
    };
    const missing = await ask("run_0000000000000000000000000");
    assert.equal(missing.status, 404);
    assert.deepEqual(await ask(id), missing);
  });

  it("drops a client that never reads once the server's bound is reached, with the lost-events notice", async () => {
    const id = await start(
      `import { ops } from "tapedeck:tools";\nexport default async () => { for (let i = 0; i < 30; i++) await ops.big({}); return "done"; };`,
    );
    const run = await admin.runs.get(id, { wait: 60 });
    assert.equal(run.status, "completed");
    const dropped = server.stderrLine((line) => line.includes("fell behind") && line.includes(id));
    const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
    await once(socket, "connect");
    // Read nothing: the kernel's buffers fill, then the server's, up to its bound.
    socket.pause();
    // HTTP/1.0: the body comes as it is, without chunked framing.
    socket.write(`GET /v1/runs/${id}/events HTTP/1.0\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${server.adminKey!}\r\n\r\n`);
    await dropped;
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await once(socket, "end");
    socket.destroy();
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text.slice(text.indexOf("\r\n\r\n") + 4);
    const blocks = body.split("\n\n").filter((block) => block.includes("data: "));
    const lastBlock = blocks.at(-1)!;
    assert.match(lastBlock, /^event: lost\n/);
    const notice = JSON.parse(lastBlock.slice(lastBlock.indexOf("data: ") + 6)) as { message: string; reloadFrom: string };
    assert.match(notice.message, /Events lost/);
    const ids = blocks.filter((block) => block.startsWith("id: ")).map((block) => Number(block.slice(4, block.indexOf("\n"))));
    // Entries went out in order up to the one to reload from, and not all of them: the server stopped at its bound.
    assert.deepEqual(
      ids,
      ids.map((_, i) => i),
    );
    assert.equal(notice.reloadFrom, String(ids.at(-1)));
    assert.ok(ids.length < run.journalLength, `${ids.length} of ${run.journalLength} entries were sent to a client that read none`);
  });
});

describe("the event stream of the runs in the caller's scope", () => {
  const runOf = (event: SseEvent): Run => event.data as Run;
  const ended = (id: string) => (event: SseEvent) => event.event === "run" && runOf(event).id === id && runOf(event).status === "completed";

  it("shows a label-limited key its own runs and never another tenant's", async () => {
    const adminStream = await SseReader.open(`${server.url}/v1/events`, server.adminKey!);
    const blueStream = await SseReader.open(`${server.url}/v1/events`, blueKey);
    assert.equal((await adminStream.next())?.event, "ready");
    assert.equal((await blueStream.next())?.event, "ready");
    const red = await start(`export default async () => "red";`, { team: "red" });
    await admin.runs.get(red, { wait: 30 });
    // Started after the red run ended: in the change order, every change of red comes before blue's.
    const blue = await start(`export default async () => "blue";`, { team: "blue" });
    const seenByBlue = await blueStream.collect(ended(blue));
    const seenByAdmin = await adminStream.collect(ended(blue));
    blueStream.close();
    adminStream.close();
    assert.ok(seenByBlue.every((event) => event.event === "run" && runOf(event).labels?.team === "blue"));
    assert.ok(seenByBlue.some(ended(blue)));
    assert.ok(seenByAdmin.some(ended(red)) && seenByAdmin.some(ended(blue)));
  });

  it("resumed with Last-Event-ID gives the changes made meanwhile, and none sent before", async () => {
    const stream = await SseReader.open(`${server.url}/v1/events?status=completed&label.team=red`, server.adminKey!);
    const ready = await stream.next();
    const first = await start(`export default async () => 1;`);
    const seen = await stream.collect(ended(first));
    stream.close();
    assert.deepEqual(
      seen.map((event) => [runOf(event).id, runOf(event).status]),
      [[first, "completed"]],
    );
    // While no one listens: a run of another team (filtered out) and one of the filter.
    const other = await start(`export default async () => 2;`, { team: "blue" });
    const second = await start(`export default async () => 3;`);
    await admin.runs.get(other, { wait: 30 });
    await admin.runs.get(second, { wait: 30 });
    const resumed = await SseReader.open(`${server.url}/v1/events?status=completed&label.team=red`, server.adminKey!, { "last-event-id": seen.at(-1)!.id! });
    const after = await resumed.collect(ended(second));
    resumed.close();
    assert.deepEqual(
      after.map((event) => [runOf(event).id, runOf(event).status]),
      [[second, "completed"]],
    );
    assert.ok(ready?.id !== undefined && seen.at(-1)!.id !== ready.id);
  });

  it("refuses a Last-Event-ID it never sent", async () => {
    const response = await fetch(`${server.url}/v1/events`, { headers: { authorization: `Bearer ${server.adminKey!}`, "last-event-id": "nonsense" } });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /Last-Event-ID/);
  });
});
