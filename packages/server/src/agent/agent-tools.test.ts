import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Tapedeck, type AgentTools, type Fetch } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * The agent tools' handlers through the SDK against a real `tapedeck serve`: idempotency by tool
 * call id, labels that scope what an agent sees, waits the model can act on, paging a long
 * output, one journal entry, cancel, tool search, and the mistakes that come back as `isError`
 * rather than thrown.
 */

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  toolset = (
    await admin.toolsets.create({
      hostTools: {
        crm: {
          find_customer: {
            description: "Finds a customer by email address.",
            inputSchema: { type: "object", properties: { email: { type: "string", description: "The customer's email." } }, required: ["email"] },
          },
          refund_order: { description: "Refunds an order in full.", inputSchema: { type: "object", properties: { order: { type: "string" } } } },
        },
      },
    })
  ).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

const agent = (labels: Record<string, string>, user = "alice", options: Parameters<Tapedeck["agentTools"]>[0] = {}): AgentTools =>
  admin.namespace(user).agentTools({ toolset, labels, ...options });

/** The run id a tool's text names first. */
const runIdOf = (text: string): string => /\b(run_[A-Za-z0-9_-]+)/.exec(text)?.[1] ?? assert.fail(`no run id in: ${text}`);

describe("agent tools through the server", () => {
  it("one tool call handled twice starts one run; agents with other labels never share the key, nor see each other's runs", async () => {
    const mine = agent({ conversation: "c1" });
    const input = { code: `export default async () => ({ n: 1 })` };
    const first = await mine.handle("run_script", input, { toolCallId: "toolu_same" });
    const again = await mine.handle("run_script", input, { toolCallId: "toolu_same" });
    assert.equal(runIdOf(again.content), runIdOf(first.content));
    assert.equal(first.run?.id, again.run?.id);
    assert.deepEqual(first.run?.labels, { conversation: "c1" });
    assert.equal(first.run?.namespace, "alice");

    const other = agent({ conversation: "c2" });
    const theirs = await other.handle("run_script", input, { toolCallId: "toolu_same" });
    assert.notEqual(runIdOf(theirs.content), runIdOf(first.content), "same tool call id, other labels: another run");
    const peek = await other.handle("get_run", { run_id: first.run.id }, { toolCallId: "t" });
    assert.deepEqual([peek.isError, /There is no run/.test(peek.content)], [true, true], "a run without the agent's labels does not exist for it");
    const listed = await other.handle("list_runs", {}, { toolCallId: "t" });
    assert.ok(listed.content.includes(theirs.run!.id) && !listed.content.includes(first.run.id), listed.content);
    const bob = admin.namespace("bob").agentTools({ toolset, labels: { conversation: "c1" } });
    assert.equal((await bob.handle("get_run", { run_id: first.run.id }, { toolCallId: "t" })).isError, true, "another end user's run does not exist either");
  });

  it("a run waiting for a signal says how to send it; signal_run is idempotent by tool call id and the run goes on", async () => {
    const tools = agent({ conversation: "signals" });
    const started = await tools.handle(
      "run_script",
      { code: `export default async () => { const n = await signal<number>("go"); return n * 2; }`, wait: 1 },
      { toolCallId: "start" },
    );
    assert.equal(started.isError, false);
    assert.match(started.content, /waiting .*\n- call #1: waiting for the signal "go"\. Send it with signal_run/);
    const runId = started.run!.id;
    const sent = await tools.handle("signal_run", { run_id: runId, name: "go", payload: 21 }, { toolCallId: "sig" });
    assert.match(sent.content, /Sent the signal "go"/);
    const resent = await tools.handle("signal_run", { run_id: runId, name: "go", payload: 21 }, { toolCallId: "sig" });
    assert.match(resent.content, /already sent .* not sent again/);
    const done = await tools.handle("get_run", { run_id: runId, wait: 30 }, { toolCallId: "get" });
    assert.match(done.content, /completed\. Output \(JSON\):\n42/);
  });

  it("a long output is cut at outputLimit with the get_run call that reads the rest; entry reads one journal entry; cancel_run stops a run", async () => {
    const tools = agent({ conversation: "paging" }, "alice", { outputLimit: 2_000 });
    const long = await tools.handle(
      "run_script",
      { code: `export default async () => Array.from({ length: 400 }, (_, i) => "line " + i)` },
      { toolCallId: "long" },
    );
    const offset = Number(/get_run\(\{ run_id: "[^"]+", offset: (\d+) \}\)/.exec(long.content)?.[1]);
    assert.ok(offset > 0 && offset <= 2_000, long.content.slice(-400));
    let text = long.content;
    const parts: string[] = [];
    for (let next: number | undefined = offset; next !== undefined;) {
      const page = await tools.handle("get_run", { run_id: long.run!.id, offset: next }, { toolCallId: `page-${next}` });
      parts.push(page.content);
      next = Number(/offset: (\d+) \}\)/.exec(page.content)?.[1]) || undefined;
      text = page.content;
    }
    assert.ok(parts.length >= 2, `read in pages (${parts.length})`);
    assert.ok(
      parts.every((part) => part.length < 2_000 + 1_000),
      "each page is bounded",
    );
    assert.match(text, /"line 399"/, "the last page holds the end");

    const entry = await tools.handle("get_run", { run_id: long.run!.id, entry: 0 }, { toolCallId: "entry" });
    assert.match(entry.content, /run\.started/);
    const missing = await tools.handle("get_run", { run_id: long.run!.id, entry: 99 }, { toolCallId: "entry99" });
    assert.equal(missing.isError, true);

    const stuck = await tools.handle("run_script", { code: `export default async () => { await sleep("10d"); return 1; }`, wait: 0 }, { toolCallId: "stuck" });
    const cancelled = await tools.handle("cancel_run", { run_id: stuck.run!.id }, { toolCallId: "cancel" });
    assert.match(cancelled.content, /was cancelled: cancelled by the agent/);
    const late = await tools.handle("signal_run", { run_id: stuck.run!.id, name: "x" }, { toolCallId: "late" });
    assert.equal(late.isError, true, "signalling an ended run is the model's mistake, not a fault");
  });

  it("search_tools answers declarations of the matching tools; check_script and test_script answer without running anything", async () => {
    const tools = agent({ conversation: "search" });
    const found = await tools.handle("search_tools", { query: "look up a customer by email" }, { toolCallId: "s" });
    assert.equal(found.isError, false);
    assert.match(found.content.split("\n").slice(0, 6).join("\n"), /find_customer/);
    assert.match(found.content, /email: string/);
    const checked = await tools.handle(
      "check_script",
      { code: `import { crm } from "tapedeck:tools";\nexport default async () => crm.find_customer({ mail: "a@b.c" });` },
      { toolCallId: "c" },
    );
    assert.equal(checked.isError, true);
    assert.match(checked.content, /'mail' does not exist/);
    const tested = await tools.handle(
      "test_script",
      {
        code: `import { crm } from "tapedeck:tools";\nexport default async () => { await sleep("3d"); return crm.find_customer({ email: "a@b.c" }); };`,
        scenario: { tools: { "crm.find_customer": { result: { id: "cus_1" } } } },
      },
      { toolCallId: "t" },
    );
    assert.equal(tested.isError, false, tested.content);
    assert.match(tested.content, /cus_1/);
    assert.equal((await admin.namespace("alice").runs.list({ labels: { conversation: "search" } })).length, 0, "nothing was started");
  });

  it("save_workflow saves a type-checked workflow on a derived toolset the later calls use; a refused one is the model's to fix", async () => {
    const tools = agent({ conversation: "workflows" });
    const first = tools.toolset;
    const workflow = {
      name: "double",
      description: "Doubles a number once it is approved.",
      code: `export default async (input: { n: number }) => { const ok = await signal<boolean>("approve"); return { doubled: ok ? input.n * 2 : 0 }; };`,
      input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      output: { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] },
      signals: { approve: { type: "boolean" } },
    };
    const wrong = await tools.handle(
      "save_workflow",
      { ...workflow, code: `export default async (input: { n: number }) => ({ doubled: String(input.n) });` },
      { toolCallId: "w0" },
    );
    assert.equal(wrong.isError, true);
    assert.match(wrong.content, /refused by the type checker/);
    assert.equal(tools.toolset, first, "nothing saved");
    const saved = await tools.handle("save_workflow", workflow, { toolCallId: "w1" });
    assert.equal(saved.isError, false, saved.content);
    assert.match(saved.content, /workflows\.double\.start/);
    assert.notEqual(tools.toolset, first, "the agent now uses the derived toolset");
    const parent = await tools.handle(
      "run_script",
      {
        code: `export default async () => { const child = await workflows.double.start({ n: 21 }); await workflows.double.signal(child.id, "approve", true); return (await child.result()).doubled; };`,
        wait: 30,
      },
      { toolCallId: "w2" },
    );
    assert.equal(parent.isError, false, parent.content);
    assert.match(parent.content, /completed\. Output \(JSON\):\n42/);
    assert.equal(parent.run?.toolset, tools.toolset);
  });

  it("traceparent (a value, or a function read at each start) puts the runs the model starts and retries in the LLM call's trace", async () => {
    let current = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const tools = agent({ conversation: "traced" }, "alice", { traceparent: () => current });
    const first = await tools.handle("run_script", { code: `export default async () => { throw new Error("again"); }` }, { toolCallId: "tr1" });
    assert.match((await tools.handle("get_run", { run_id: first.run!.id, entry: 0 }, { toolCallId: "e" })).content, /4bf92f3577b34da6a3ce929d0e0e4736/);
    current = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const retried = await tools.handle("retry_run", { run_id: first.run!.id, code: `export default async () => 1` }, { toolCallId: "tr2" });
    assert.match((await tools.handle("get_run", { run_id: retried.run!.id, entry: 0 }, { toolCallId: "e2" })).content, /0af7651916cd43dd8448eb211c80319c/);
  });

  it("bad input comes back as isError for the model; a key's client without a namespace cannot make agent tools", async () => {
    const tools = agent({ conversation: "mistakes" });
    const bad = await tools.handle("run_script", { script: "x" }, { toolCallId: "bad" });
    assert.equal(bad.isError, true);
    assert.match(bad.content, /"code" is missing; "script" is not one of its fields/);
    const block = { type: "tool_use", id: "toolu_1", name: "delete_everything", input: {} } as const;
    const unknown = await tools.anthropic.handle(block);
    assert.deepEqual([unknown.is_error, /There is no tool "delete_everything"/.test(String(unknown.content))], [true, true]);
    assert.throws(() => admin.agentTools({ toolset }), /namespace\(userId\)/);
    const subset = admin.namespace("alice").agentTools({ toolset, tools: ["run_script", "get_run"] });
    assert.deepEqual(
      subset.anthropic.tools.map((t) => t.name),
      ["run_script", "get_run"],
    );
    assert.deepEqual(
      subset.openai.responses.tools.map((t) => t.name),
      ["run_script", "get_run"],
    );
  });

  it("seed 001's results: content on the generic handle; run on the adapters' results too (never sent to the model); approvals.pending(result.run)", async () => {
    const guarded = (
      await admin.toolsets.create({
        hostTools: { crm: { refund_order: { description: "Refunds an order in full.", inputSchema: { type: "object" } } } },
        policies: { "crm.refund_order": { approval: true } },
      })
    ).id;
    const tools = admin.namespace("alice").agentTools({ toolset: guarded, labels: { conversation: "seed-results" } });
    const code = `import { crm } from "tapedeck:tools";\nexport default async () => crm.refund_order({ order: "o_1" });`;
    const result = await tools.handle("run_script", { code, wait: 5 }, { toolCallId: "refund" });
    assert.equal(result.isError, false, result.content);
    assert.match(result.content, /crm\.refund_order\(\{"order":"o_1"\}\) waits for approval/);
    const run = result.run ?? assert.fail("the generic result holds the run");
    const expected = [
      {
        kind: "approval",
        seq: 1,
        tool: "crm.refund_order",
        args: { order: "o_1" },
        id: `${run.id}/1`,
        runId: run.id,
        labels: { conversation: "seed-results" },
        namespace: "alice",
      },
    ];
    assert.deepEqual(await admin.approvals.pending(run), expected, "pending() takes the run itself");
    assert.deepEqual(await admin.approvals.pending(run.id), expected, "or its id");

    const input = { run_id: run.id };
    const anthropic = await tools.anthropic.handle({ id: "toolu_seed", name: "get_run", input });
    const responses = await tools.openai.responses.handle({ call_id: "call_seed", name: "get_run", arguments: JSON.stringify(input) });
    const chat = await tools.openai.handle({ id: "call_chat", type: "function", function: { name: "get_run", arguments: JSON.stringify(input) } });
    for (const [api, answer, sent] of [
      ["anthropic", anthropic, anthropic.content],
      ["responses", responses, responses.output],
      ["chat", chat, chat.content],
    ] as const) {
      assert.equal(answer.run?.id, run.id, `${api}: result.run is the run`);
      assert.equal(answer.run?.status, "waiting");
      assert.ok(!Object.keys(answer).includes("run") && !JSON.stringify(answer).includes(`"run"`), `${api}: the run is not in what goes to the model API`);
      assert.match(sent, /waits for approval/);
    }
    await admin.approvals.reject(run.id, 1);
  });

  it("get_run shows the calls of completed and running runs too (the trace); cancel_run on an ended run is the model's mistake", async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const worker = admin
      .worker({
        tools: {
          crm: {
            find_customer: async ({ email }: { email: string }) => {
              if (email === "hold@acme.test") await held;
              return { id: `cus_${email.length}`, email };
            },
          },
        },
      })
      .start();
    try {
      const tools = agent({ conversation: "traces" });
      const header = `import { crm } from "tapedeck:tools";\n`;
      const done = await tools.handle(
        "run_script",
        { code: `${header}export default async () => ((await crm.find_customer({ email: "a@b.c" })) as { id: string }).id;`, wait: 30 },
        { toolCallId: "done" },
      );
      assert.match(done.content, /completed\. Output \(JSON\):\n"cus_5"/);
      const read = await tools.handle("get_run", { run_id: done.run!.id }, { toolCallId: "read" });
      assert.match(read.content, /\n\nCalls:\n#1 crm\.find_customer\(\{"email":"a@b\.c"\}\) → \{"id":"cus_5","email":"a@b\.c"\}/);

      const going = await tools.handle(
        "run_script",
        {
          code: `${header}export default async () => { await crm.find_customer({ email: "a@b.c" }); return ((await crm.find_customer({ email: "hold@acme.test" })) as { id: string }).id; };`,
          wait: 0,
        },
        { toolCallId: "going" },
      );
      let running = await tools.handle("get_run", { run_id: going.run!.id }, { toolCallId: "running" });
      // The first call may still be answering when the run is first read: read until the second is out.
      for (let reads = 0; reads < 50 && !running.content.includes("#2 "); reads++)
        running = await tools.handle("get_run", { run_id: going.run!.id, wait: 1 }, { toolCallId: `running-${reads}` });
      assert.match(running.content, /is still running/);
      assert.match(
        running.content,
        /Calls so far:\n#1 crm\.find_customer\(\{"email":"a@b\.c"\}\) → \{"id":"cus_5","email":"a@b\.c"\}\n#2 crm\.find_customer\(\{"email":"hold@acme\.test"\}\) → \(no answer yet\)/,
      );
      release();
      await admin.runs.get(going.run!.id, { wait: 30 });

      const again = await tools.handle("cancel_run", { run_id: done.run!.id }, { toolCallId: "cancel-ended" });
      assert.equal(again.isError, true, again.content);
      assert.equal(
        again.content,
        `Run ${done.run!.id} has already ended (completed): there is nothing to cancel. get_run({ run_id: "${done.run!.id}" }) shows how it ended.`,
      );
      assert.equal((await admin.runs.get(done.run!.id)).status, "completed");
    } finally {
      release();
      await worker.stop();
    }
  });

  it("outputLimit counts UTF-8 bytes of the output, not characters", async () => {
    const limit = 2_000;
    const tools = agent({ conversation: "bytes" }, "alice", { outputLimit: limit });
    const first = await tools.handle(
      "run_script",
      { code: `export default async () => Array.from({ length: 300 }, (_, i) => "été ☀ 🚀 n°" + i)` },
      { toolCallId: "bytes" },
    );
    const pages: string[] = [];
    for (let text: string | undefined = first.content; text !== undefined;) {
      const page: RegExpExecArray | null =
        /\):\n([\s\S]*?)\n\[… \d+ more characters cut\]: read on with get_run\(\{ run_id: "[^"]+", offset: (\d+) \}\)/.exec(text) ??
        /\):\n([\s\S]*)$/.exec(text);
      assert.ok(page?.[1], text.slice(0, 300));
      assert.ok(Buffer.byteLength(page[1]) <= limit, `a page of ${Buffer.byteLength(page[1])} bytes, more than outputLimit`);
      pages.push(page[1]);
      text =
        page[2] === undefined
          ? undefined
          : (await tools.handle("get_run", { run_id: first.run!.id, offset: Number(page[2]) }, { toolCallId: `bytes-${page[2]}` })).content;
    }
    assert.ok(pages.length > 2);
    assert.equal(pages.join(""), JSON.stringify(first.run ? (await admin.runs.get(first.run.id)).output : null, null, 2), "the pages are the whole output");
  });

  it("run_script on a script that sleeps an hour answers at once with when it wakes, without holding the model", async () => {
    const holds: string[] = [];
    const counting: Fetch = (url, init) => {
      if (url.includes("next=true")) holds.push(url);
      return fetch(url, init);
    };
    const client = new Tapedeck({ baseUrl: server.url, apiKey: server.adminKey!, namespace: "alice", fetch: counting });
    const tools = client.agentTools({ toolset, labels: { conversation: "long-sleep" }, wait: "5s" });
    const answer = await tools.handle("run_script", { code: `export default async () => { await sleep("1h"); return "rested"; };` }, { toolCallId: "nap" });
    assert.equal(answer.isError, false, answer.content);
    assert.equal(answer.run?.status, "waiting");
    const id = answer.run?.id ?? assert.fail("the result holds the run");
    assert.match(answer.content, /call #1: sleeping until [^;]+; it goes on by itself then\./);
    assert.match(
      answer.content,
      new RegExp(
        `It wakes by itself at \\S+, in (59m \\d+s|1h), and goes on then\\. Do not wait for it now: call get_run\\(\\{ run_id: "${id}" \\}\\) after that time`,
      ),
    );
    assert.deepEqual(holds, [], "no hold was spent waiting for a wake an hour away");
  });

  it("test_script's scenario.from_run answers another agent's run as missing; the agent's own replays", async () => {
    const mine = agent({ conversation: "replay-a" });
    const theirs = agent({ conversation: "replay-b" });
    const recorded = await mine.handle("run_script", { code: `export default async () => { await sleep(5); return 1; };`, wait: 30 }, { toolCallId: "rec" });
    assert.match(recorded.content, /completed/);
    const code = `export default async () => { await sleep(5); return 2; };`;
    const stolen = await theirs.handle("test_script", { code, scenario: { from_run: recorded.run!.id } }, { toolCallId: "steal" });
    assert.equal(stolen.isError, true, stolen.content);
    assert.equal(stolen.content, `There is no run "${recorded.run!.id}" in this conversation (scenario.from_run). list_runs shows the runs you started.`);
    const own = await mine.handle("test_script", { code, scenario: { from_run: recorded.run!.id } }, { toolCallId: "own" });
    assert.equal(own.isError, false, own.content);
  });
});
