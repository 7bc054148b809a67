import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Hostile POSTs to a run-bound webhook URL (`/hooks/:token`), which anyone may send: no API key,
 * the token is the capability. Bodies nested too deep, lone UTF-16 surrogates (no canonical
 * JSON holds them), garbage. None takes the server down or reaches the run; the run waiting on
 * the hook goes on; after a restart nothing is replayed into a fault.
 */
let hostile: HostileServer;

before(async () => {
  hostile = await startHostileServer();
});

after(async () => {
  await hostile.close();
});

/** The attacker's run waits on signal "go" from its webhook, and passes the payload on to a tool. */
const WAITING = `import { probe } from "tapedeck:tools";
export default async () => {
  const hook = await webhook("go");
  console.log(hook.url);
  const payload = await signal("go");
  return probe.echo({ payload } as never);
};`;

async function waitingRun(): Promise<{ id: string; hook: string }> {
  const started = await hostile.attacker.runs.start({ toolset: hostile.toolset, source: WAITING });
  if (started.kind !== "started") throw new Error(JSON.stringify(started.diagnostics));
  const run = await hostile.attacker.runs.get(started.run.id, { wait: 30 });
  assert.equal(run.status, "waiting", JSON.stringify(run));
  return { id: run.id, hook: await hookOf(run.id) };
}

/** The URL of the run's webhook (from its journal), on the server as it is now. */
async function hookOf(runId: string): Promise<string> {
  const { entries } = await hostile.attacker.runs.journal(runId);
  for (const entry of entries) {
    if (entry.kind !== "call.completed" || typeof entry.result !== "object" || entry.result === null || Array.isArray(entry.result)) continue;
    const url = entry.result.url;
    if (typeof url === "string") return new URL(new URL(url).pathname, hostile.server.url).href;
  }
  return assert.fail(`run ${runId} journaled no webhook URL`);
}

function nested(depth: number, leaf = "x"): string {
  return `${"[".repeat(depth)}${JSON.stringify(leaf)}${"]".repeat(depth)}`;
}

async function post(url: string, body: string, contentType = "application/json"): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": contentType }, body });
  return { status: response.status, text: await response.text() };
}

describe("hostile webhook payloads", () => {
  it("bodies nested too deep or holding lone surrogates are refused at the door; the run goes on waiting; the server serves, also after a restart", async () => {
    const { id, hook } = await waitingRun();
    const refused = [
      [nested(100_000), /more than 256 levels deep/],
      [nested(300), /more than 256 levels deep/],
      ['{"text":"lone \\ud800 high"}', /lone UTF-16 surrogate/],
      ['{"\\udc00":"lone low in a key"}', /lone UTF-16 surrogate/],
      ['["\\ud800\\ud800"]', /lone UTF-16 surrogate/],
    ] as const;
    for (const [body, message] of refused) {
      const answer = await post(hook, body);
      assert.equal(answer.status, 400, `${body.slice(0, 40)}: ${answer.text}`);
      assert.match(answer.text, message);
    }
    // Garbage of every other kind gets a 4xx too.
    assert.equal((await post(hook, "{not json")).status, 400);
    assert.equal((await post(hook, "\u0000\u00ff", "application/octet-stream")).status, 415);
    assert.equal((await post(hook, JSON.stringify("x".repeat(5 * 1024 * 1024)))).status, 413);
    assert.equal((await post(new URL("/hooks/no-such-token", hostile.server.url).href, "{}")).status, 404);
    assert.equal((await hostile.attacker.runs.get(id)).status, "waiting", "nothing reached the run");
    await hostile.assertStillServing();
    await hostile.restart();
    assert.equal((await hostile.attacker.runs.get(id)).status, "waiting");
    await hostile.assertStillServing();
    // A well-formed payload with a surrogate pair, as deep as allowed, is delivered and the run completes.
    const payload = nested(200, "emoji \ud83d\ude00");
    const answer = await post(hook, payload);
    assert.equal(answer.status, 200, answer.text);
    const run = await hostile.attacker.runs.get(id, { wait: 30 });
    assert.equal(run.status, "completed", JSON.stringify(run.error));
    assert.deepEqual(run.output, { payload: JSON.parse(payload) as unknown });
  });

  it("a run that got a payload it cannot pass on fails on its own, and stays failed after a restart", async () => {
    // The API refuses lone surrogates; a script can still make one from a payload (or anything).
    const started = await hostile.attacker.runs.start({
      toolset: hostile.toolset,
      source: `import { probe } from "tapedeck:tools";
        export default async () => { await webhook("go"); const p = (await signal("go")) as { code: number }; return probe.echo({ text: String.fromCharCode(p.code) } as never); };`,
    });
    if (started.kind !== "started") throw new Error("refused");
    await hostile.attacker.runs.get(started.run.id, { wait: 30 });
    assert.equal((await post(await hookOf(started.run.id), '{"code":55296}')).status, 200);
    const run = await hostile.attacker.runs.get(started.run.id, { wait: 30 });
    assert.equal(run.status, "failed");
    assert.match(run.error?.message ?? "", /^probe\.echo: the arguments hold a lone UTF-16 surrogate/);
    await hostile.restart();
    assert.equal((await hostile.attacker.runs.get(started.run.id)).status, "failed");
    await hostile.assertStillServing();
  });
});
