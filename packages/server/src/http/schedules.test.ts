import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SCHEDULE_RUN_LABEL, TapedeckError, type Schedule, type Tapedeck, type ToolsetSpec } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Schedules through the SDK against one real `tapedeck serve` on loopback: a schedule the server
 * fires by itself (on the real clock: the shortest interval, a second, and the log line that
 * says it fired, no sleep), its runs' labels and namespace, next fire times in a zone, trigger,
 * backfill, pause and resume, refusals naming every problem, and scopes (another tenant's
 * schedule answers 404).
 */
const HOST_MODULE = `export const clock = { read: async () => ({ at: 1 }) };`;

const TOOLSET: ToolsetSpec = {
  hostTools: { clock: { read: { description: "Reads the clock.", inputSchema: { type: "object" } } } },
};

const SOURCE = `import { clock } from "tapedeck:tools";\nexport default async (input: unknown) => ({ input, read: await clock.read({}) });\n`;
const DAY = 86_400_000;

let server: ServeChild;
let td: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild({ hostModule: HOST_MODULE });
  td = server.client(server.adminKey!);
  toolset = (await td.toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function rejects(call: Promise<unknown>, status: number, code: string): Promise<TapedeckError> {
  try {
    await call;
  } catch (error) {
    assert.ok(TapedeckError.is(error), String(error));
    assert.deepEqual([error.status, error.code], [status, code], error.message);
    return error;
  }
  assert.fail(`expected ${status} ${code}`);
}

/** The first "schedule fired" log line of this schedule in this state, parsed (the server logs JSON lines when stderr is not a terminal). */
async function firedLine(id: string, state: string): Promise<{ runId?: string; fireAt: string }> {
  const line = await server.stderrLine((text) => text.includes('"schedule fired"') && text.includes(`"${id}"`) && text.includes(`"state":"${state}"`));
  return JSON.parse(line) as { runId?: string; fireAt: string };
}

describe("schedules over HTTP, through the SDK", () => {
  it("tapedeck serve fires a schedule by itself; its run carries the schedule's labels and is listed under it", async () => {
    const created = await td.schedules.create({ toolset, source: SOURCE, input: { n: 1 }, every: "1s", labels: { team: "red" } });
    assert.equal(created.everyMs, 1_000);
    assert.equal(created.upcoming.length, 5);
    assert.deepEqual(created.labels, { team: "red" });
    const fired = await firedLine(created.id, "started");
    assert.ok(fired.runId);
    const run = await td.runs.get(fired.runId, { wait: 30 });
    assert.equal(run.status, "completed");
    assert.deepEqual(run.labels, { team: "red", [SCHEDULE_RUN_LABEL]: created.id });
    assert.deepEqual(run.output, { input: { n: 1 }, read: { at: 1 } });
    // Stopped before listing, so the lists below hold still.
    const paused = await td.schedules.pause(created.id);
    assert.equal(paused.paused, true);
    assert.deepEqual(paused.upcoming, []);
    const runs = await td.schedules.runs(created.id);
    assert.ok(runs.some((listed) => listed.id === run.id));
    const fires = await td.schedules.fires(created.id);
    assert.ok(fires.some((one) => one.runId === run.id && one.state === "started" && one.kind === "scheduled" && one.fireAt === Date.parse(fired.fireAt)));
    const resumed = await td.schedules.resume(created.id);
    assert.equal(resumed.paused, false);
    assert.ok(resumed.upcoming[0]! > Date.now() - 1_000);
    await td.schedules.delete(created.id);
    await rejects(td.schedules.get(created.id), 404, "not_found");
  });

  it("a cron schedule in Europe/Berlin shows its next fires; trigger and backfill start runs, a backfill asked twice starts nothing more", async () => {
    const created = await td.schedules.create({ toolset, source: SOURCE, cron: "0 9 * * *", timezone: "Europe/Berlin", paused: true, note: "daily" });
    assert.deepEqual(created.upcoming, []);
    const resumed = await td.schedules.resume(created.id);
    assert.equal(resumed.upcoming.length, 5);
    for (const at of resumed.upcoming) {
      const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(at);
      assert.equal(local, "09:00");
    }
    const fetched = await td.schedules.get(created.id);
    assert.deepEqual(fetched.upcoming, resumed.upcoming);
    assert.equal(fetched.note, "daily");

    const triggered = await td.schedules.trigger(created.id);
    assert.equal(triggered.kind, "trigger");
    assert.equal(triggered.state, "started");
    const run = await td.runs.get(triggered.runId!, { wait: 30 });
    assert.equal(run.labels[SCHEDULE_RUN_LABEL], created.id);

    // Three 09:00 Berlin times lie in the last 72 hours (four when a day of them was 23 hours long).
    const now = Date.now();
    const backfilled = await td.schedules.backfill(created.id, { from: now - 3 * DAY, to: now });
    assert.ok(backfilled.length === 3 || backfilled.length === 4, String(backfilled.length));
    assert.ok(backfilled.every((one) => one.kind === "backfill" && one.state === "started" && one.runId !== undefined));
    assert.deepEqual(await td.schedules.backfill(created.id, { from: now - 3 * DAY, to: now }), []);
    const runs = await td.schedules.runs(created.id);
    assert.equal(runs.length, backfilled.length + 1);
    await rejects(td.schedules.backfill(created.id, { from: now, to: now + DAY }), 400, "invalid_request");
    await td.schedules.delete(created.id);
    await rejects(td.schedules.delete(created.id), 404, "not_found");
    // Its runs stay.
    assert.equal((await td.runs.get(run.id)).id, run.id);
  });

  it("a schedule that is not right is refused whole, every problem named, nothing saved", async () => {
    const before = (await td.schedules.list()).length;
    const error = await rejects(
      td.schedules.create({
        toolset,
        source: SOURCE,
        workflow: "nightly",
        every: "soon",
        catchupWindow: "-",
        timezone: "Mars/Olympus_Mons",
        labels: { [SCHEDULE_RUN_LABEL]: "mine" },
      }),
      400,
      "invalid_request",
    );
    for (const part of [
      "exactly one of workflow",
      'every "soon" is not a duration',
      'catchupWindow "-" is not a duration',
      "Mars/Olympus_Mons",
      `${SCHEDULE_RUN_LABEL} is set by the schedule`,
    ])
      assert.ok(error.message.includes(part), `${part} in: ${error.message}`);
    const short = await rejects(td.schedules.create({ toolset, source: SOURCE, every: 10 }), 400, "invalid_request");
    assert.match(short.message, /every must be a whole number of milliseconds, at least 1000/);
    await rejects(td.schedules.create({ toolset, source: SOURCE, cron: "61 * * * *" }), 400, "invalid_request");
    const script = await rejects(td.schedules.create({ toolset, source: "export default async () => nope;", cron: "0 * * * *" }), 422, "script_refused");
    assert.ok((script.diagnostics ?? []).length > 0);
    await rejects(td.schedules.create({ toolset: "ts_unknown", source: SOURCE, cron: "0 * * * *" }), 404, "not_found");
    assert.equal((await td.schedules.list()).length, before);
  });

  it("a key limited to a namespace or labels sees only its own schedules; others answer 404; a token cannot manage schedules", async () => {
    const alice = server.client(await createKey(server.dataDir, "--namespace", "alice"));
    const red = server.client(await createKey(server.dataDir, "--label", "team=red"));
    const blue = server.client(await createKey(server.dataDir, "--label", "team=blue"));
    const ofAlice = await alice.schedules.create({ toolset, source: SOURCE, cron: "0 3 * * *", paused: true });
    assert.equal(ofAlice.namespace, "alice");
    const ofRed = await red.schedules.create({ toolset, source: SOURCE, cron: "0 3 * * *", labels: { job: "nightly" }, paused: true });
    assert.deepEqual(ofRed.labels, { team: "red", job: "nightly" });
    await rejects(red.schedules.create({ toolset, source: SOURCE, cron: "0 3 * * *", labels: { team: "blue" } }), 403, "forbidden");
    await rejects(red.schedules.create({ toolset, source: SOURCE, cron: "0 3 * * *", namespace: "bob" }), 403, "forbidden");

    const ids = async (client: Tapedeck, query = {}): Promise<string[]> => (await client.schedules.list(query)).map((one: Schedule) => one.id);
    assert.deepEqual(await ids(alice), [ofAlice.id]);
    assert.deepEqual(await ids(red), [ofRed.id]);
    assert.deepEqual(await ids(blue), []);
    const all = await ids(td);
    assert.ok(all.includes(ofAlice.id) && all.includes(ofRed.id));
    assert.deepEqual(await ids(td, { namespace: "alice" }), [ofAlice.id]);
    assert.deepEqual(await ids(td, { labels: { job: "nightly" } }), [ofRed.id]);

    for (const call of [
      () => blue.schedules.get(ofRed.id),
      () => blue.schedules.pause(ofRed.id),
      () => blue.schedules.resume(ofRed.id),
      () => blue.schedules.trigger(ofRed.id),
      () => blue.schedules.fires(ofRed.id),
      () => blue.schedules.backfill(ofRed.id, { from: 0, to: 1 }),
      () => blue.schedules.delete(ofRed.id),
      () => alice.schedules.get(ofRed.id),
      () => red.schedules.get(ofAlice.id),
    ])
      await rejects(call(), 404, "not_found");

    const fired = await red.schedules.trigger(ofRed.id);
    const run = await red.runs.get(fired.runId!, { wait: 30 });
    assert.deepEqual(run.labels, { team: "red", job: "nightly", [SCHEDULE_RUN_LABEL]: ofRed.id });
    const aliceFire = await alice.schedules.trigger(ofAlice.id);
    assert.equal((await alice.runs.get(aliceFire.runId!, { wait: 30 })).namespace, "alice");
    assert.deepEqual(await blue.schedules.runs(ofRed.id), []);

    const token = (await td.tokens.create({ namespace: "alice", ttlSeconds: 300 })).token;
    await rejects(server.client(token).schedules.list(), 403, "forbidden");
    await alice.schedules.delete(ofAlice.id);
    await red.schedules.delete(ofRed.id);
  });

  it("the OpenAPI document has every schedule route", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ["/v1/schedules", "post"],
      ["/v1/schedules", "get"],
      ["/v1/schedules/{id}", "get"],
      ["/v1/schedules/{id}", "delete"],
      ["/v1/schedules/{id}/fires", "get"],
      ["/v1/schedules/{id}/pause", "post"],
      ["/v1/schedules/{id}/resume", "post"],
      ["/v1/schedules/{id}/trigger", "post"],
      ["/v1/schedules/{id}/backfill", "post"],
    ] as const)
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
  });
});
