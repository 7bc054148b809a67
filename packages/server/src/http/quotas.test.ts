import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";
import { failure } from "./test-support/failure.js";

/**
 * Quotas on starting runs (`quotas/run-quotas.ts`) and run budgets, through a real
 * `tapedeck serve` over HTTP and the SDK: over a namespace's runs per minute or concurrent runs,
 * or a key's runs per minute, a start answers 429 `quota_exceeded` with `Retry-After`; the agent
 * tools give it to the model as `isError` text; a start's `budget` fails a looping run
 * `budget_exceeded`, and `run_script` tells the model what ran out.
 */
let server: ServeChild;
let admin: Tapedeck;
let toolset: string;

const HOST = `let n = 0; export const c = { count: async () => ++n };`;
const LOOP = `import { c } from "tapedeck:tools";
export default async () => { for (;;) await c.count({}); };`;
const WAITING = `export default async () => signal("go");`;

before(async () => {
  server = await startServeChild({ hostModule: HOST, args: ["--namespace-quotas", "concurrentRuns=2,runsPerMinute=3,callsPerMinute=5"] });
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create({ hostTools: { c: { count: { description: "Counts.", inputSchema: { type: "object" } } } } })).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

describe("quotas through the server", () => {
  it("runs per minute: the namespace's start past its quota is 429 quota_exceeded with Retry-After; another namespace still starts", async () => {
    const alice = admin.namespace("alice");
    for (let i = 0; i < 3; i++) assert.equal((await alice.runs.start({ toolset, source: `export default async () => ${i};` })).kind, "started");
    const refused = await failure(alice.runs.start({ toolset, source: `export default async () => 4;` }));
    assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
    assert.match(refused.message, /namespace "alice" may start 3 runs per minute/);
    assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60, String(refused.retryAfterSeconds));

    // The same over raw HTTP: the header and the body.
    const raw = await fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey!}`, "content-type": "application/json" },
      body: JSON.stringify({ toolset, source: `export default async () => 5;`, namespace: "alice" }),
    });
    assert.equal(raw.status, 429);
    const seconds = Number(raw.headers.get("retry-after"));
    assert.ok(seconds >= 1 && seconds <= 60, `Retry-After: ${raw.headers.get("retry-after")}`);
    const body = (await raw.json()) as { error: { code: string; retryAfterSeconds: number } };
    assert.deepEqual([body.error.code, body.error.retryAfterSeconds], ["quota_exceeded", seconds]);

    assert.equal((await admin.namespace("bob").runs.start({ toolset, source: `export default async () => 1;` })).kind, "started");
    // A run outside any namespace is not limited by the namespaces' quotas.
    for (let i = 0; i < 4; i++) assert.equal((await admin.runs.start({ toolset, source: `export default async () => 1;` })).kind, "started");
  });

  it("concurrent runs: the third run in progress is refused; once one ends, a start goes through", async () => {
    const carol = admin.namespace("carol");
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const started = await carol.runs.start({ toolset, source: WAITING });
      runs.push(started.kind === "started" ? started.run : assert.fail("refused"));
    }
    const refused = await failure(carol.runs.start({ toolset, source: WAITING }));
    assert.deepEqual([refused.status, refused.code, refused.retryAfterSeconds], [429, "quota_exceeded", 5]);
    assert.match(refused.message, /namespace "carol" has 2 runs in progress, its quota of concurrent runs is 2/);
    await carol.runs.signal(runs[0]!.id, { name: "go" });
    assert.equal((await carol.runs.get(runs[0]!.id, { wait: 30 })).status, "completed");
    assert.equal((await carol.runs.start({ toolset, source: `export default async () => 1;` })).kind, "started");
  });

  it("the agent tools give a 429 to the model as isError text, not a throw", async () => {
    const agent = admin.namespace("dave").agentTools({ toolset, labels: { conversation: "q" } });
    for (let i = 0; i < 3; i++) {
      const ok = await agent.handle("run_script", { code: `export default async () => ${i};` }, { toolCallId: `toolu_${i}` });
      assert.equal(ok.isError, false, ok.content);
    }
    const refused = await agent.handle("run_script", { code: `export default async () => 3;` }, { toolCallId: "toolu_3" });
    assert.equal(refused.isError, true);
    assert.match(
      refused.content,
      /^Refused \(over a quota, nothing was started\): Quota exceeded: namespace "dave" may start 3 runs per minute.* Try again in \d+ s/,
    );
  });

  it("direct tools give a 413 to the model as an isError result in its API's shape, not a throw", async () => {
    const tools = await admin.namespace("gina").directTools({ toolset, session: "conv-413" });
    const name = tools.definitions[0]?.name ?? assert.fail("no tool");
    const big = { blob: "x".repeat(5 * 1024 * 1024) };
    const generic = await tools.handle(name, big, { toolCallId: "call_big" });
    assert.equal(generic.isError, true);
    assert.match(generic.text, /^Refused: The body is larger than 4194304 bytes .* Nothing was started or sent\.$/);
    const block = await tools.anthropic.handle({ id: "toolu_big", name, input: big });
    assert.deepEqual([block.type, block.tool_use_id, block.is_error], ["tool_result", "toolu_big", true]);
  });

  it("calls per minute: an end user's sixth call in a minute fails rate_limited unsent, in a script and as a direct tool's isError result", async () => {
    const hana = admin.namespace("hana");
    const started = await hana.runs.start({
      toolset,
      source: `import { c } from "tapedeck:tools";
export default async () => { const seen = []; for (let i = 0; i < 7; i++) { try { seen.push(await c.count({})); } catch (e) { seen.push((e as { code: string }).code); } } return seen; };`,
    });
    const run = await hana.runs.get(started.kind === "started" ? started.run.id : assert.fail("refused"), { wait: 60 });
    const seen = run.output as (number | string)[];
    assert.equal(seen.filter((x) => typeof x === "number").length, 5, JSON.stringify(seen));
    assert.deepEqual(seen.slice(5), ["rate_limited", "rate_limited"]);
    const tools = await hana.directTools({ toolset, session: "conv-quota" });
    const answer = await tools.handle(tools.definitions[0]!.name, {}, { toolCallId: "call_over" });
    assert.equal(answer.isError, true);
    // Direct tools say a rate_limited failure in words of their own: what happened and when to call again.
    assert.match(answer.text, /^The call to "c_count" was refused by a rate limit; nothing was sent\. Wait \d+(s|m) before calling it again/);
  });

  it("a start's budget: a looping run fails budget_exceeded at its maxCalls; a wrong budget is 400", async () => {
    const started = await admin.runs.start({ toolset, source: LOOP, budget: { maxCalls: 4 } });
    const run = await admin.runs.get(started.kind === "started" ? started.run.id : assert.fail("refused"), { wait: 60 });
    assert.equal(run.status, "failed");
    assert.equal(run.error?.failure?.code, "budget_exceeded");
    assert.deepEqual(run.error?.failure?.details, { budget: "maxCalls", limit: 4 });
    const wrong = await failure(admin.runs.start({ toolset, source: LOOP, budget: { maxCalls: 1.5 } }));
    assert.deepEqual([wrong.status, wrong.code], [400, "invalid_request"]);
    assert.match(wrong.message, /budget\.maxCalls: 1\.5 is not a whole number/);
  });

  it("run_script on a toolset with a budget: the model is told what ran out and what to do", async () => {
    const limited = (
      await admin.toolsets.create({ hostTools: { c: { count: { description: "Counts.", inputSchema: { type: "object" } } } }, budget: { maxCalls: 3 } })
    ).id;
    const agent = admin.namespace("frank").agentTools({ toolset: limited, labels: { conversation: "budget" } });
    const answer = await agent.handle("run_script", { code: LOOP, wait: 60 }, { toolCallId: "toolu_loop" });
    assert.equal(answer.isError, true);
    assert.match(answer.content, /budget of 3 tool calls \(maxCalls\) ran out: call #4 \(c\.count\) was not sent/);
    assert.match(answer.content, /The run used up its budget: the call past it was not made\. Change the script so it needs fewer calls/);
  });
});

describe("key quotas through the server", () => {
  let keyed: ServeChild;
  before(async () => {
    keyed = await startServeChild({ args: ["--key-quotas", "runsPerMinute=2"] });
  });
  after(async () => {
    assert.equal(await keyed.stop(), 0, keyed.stderr());
    keyed.cleanup();
  });

  it("a key's start past its runs per minute is 429; another key still starts", async () => {
    const erin = keyed.client(await createKey(keyed.dataDir, "--namespace", "erin"));
    const empty = (await erin.toolsets.create({})).id;
    for (let i = 0; i < 2; i++) assert.equal((await erin.runs.start({ toolset: empty, source: `export default async () => 1;` })).kind, "started");
    const refused = await failure(erin.runs.start({ toolset: empty, source: `export default async () => 1;` }));
    assert.deepEqual([refused.status, refused.code], [429, "quota_exceeded"]);
    assert.match(refused.message, /API key key_[0-9a-f]+ may start 2 runs per minute/);
    const other = keyed.client(keyed.adminKey!);
    assert.equal((await other.runs.start({ toolset: empty, source: `export default async () => 1;` })).kind, "started");
  });

  it("a wrong quota flag is refused, naming it", async () => {
    await assert.rejects(startServeChild({ args: ["--key-quotas", "runsPerHour=2"] }), /--key-quotas has an unknown key "runsPerHour"/);
  });
});
