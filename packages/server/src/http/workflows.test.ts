import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PolledTasks, Run, SaveWorkflowRequest, Tapedeck, ToolsetSpec } from "@tapedeck/sdk";
import { failure } from "./test-support/failure.js";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Workflows through the SDK against a real `tapedeck serve`: saving one derives a toolset
 * (`POST /v1/toolsets/:id/workflows`), code that does not type-check is refused with
 * diagnostics, and a script on the derived toolset starts, signals and awaits a child run,
 * which the API shows with its caller; a worker polling for the first toolset serves the runs of
 * the derived one.
 */
const HOST_MODULE = `export const shop = { price: async ({ sku }: { sku: string }) => ({ sku, cents: sku.length * 100 }) };`;

const TOOLSET: ToolsetSpec = {
  hostTools: {
    shop: {
      price: {
        description: "A price.",
        inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"], additionalProperties: false },
        outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "integer" } }, required: ["sku", "cents"] },
      },
    },
    // Not in the host module: served by workers polling the API.
    desk: {
      ask: {
        description: "Asks a person.",
        inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        outputSchema: { type: "string" },
      },
    },
  },
};

const QUOTE: SaveWorkflowRequest = {
  name: "quote",
  description: "Prices a product, once a human approves.",
  code: `import { shop } from "tapedeck:tools";
export default async (input: { sku: string }) => {
  const approval = await signal<{ by: string }>("approved");
  const price = await shop.price({ sku: input.sku });
  return { cents: price.cents, by: approval.by };
};`,
  input: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
  output: { type: "object", properties: { cents: { type: "integer" }, by: { type: "string" } }, required: ["cents", "by"] },
  signals: { approved: { type: "object", properties: { by: { type: "string" } }, required: ["by"] } },
};

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

describe("workflows over HTTP", () => {
  it("saving derives a toolset with the workflow; a script on it starts, signals and awaits the child run", async () => {
    const saved = await td.toolsets.saveWorkflow(toolset, QUOTE);
    assert.equal(saved.kind, "saved", saved.kind === "refused" ? saved.diagnostics.map((d) => d.message).join("\n") : "");
    if (saved.kind !== "saved") return;
    assert.notEqual(saved.id, toolset);
    assert.match(saved.declarations.typescript, /readonly quote: \{/);
    assert.match(
      saved.declarations.prompt,
      /^workflows\.quote\.start\(\{ sku: string \}\) → \{ id, result\(\) → \{ cents: number, by: string \} \} · Prices a product, once a human approves\.$/m,
    );
    const info = await td.toolsets.get(saved.id);
    assert.deepEqual([info.toolset.base, Object.keys(info.toolset.workflows ?? {})], [toolset, ["quote"]]);
    assert.equal((await td.toolsets.get(toolset)).toolset.workflows, undefined, "the toolset it was saved on is unchanged");

    const started = await td.runs.start({
      toolset: saved.id,
      labels: { conversation: "c1" },
      source: `export default async () => {
  const run = await workflows.quote.start({ sku: "abc" });
  await workflows.quote.signal(run.id, "approved", { by: "ann" });
  return run.result();
};`,
    });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    let run: Run = started.run;
    for (let i = 0; i < 10 && run.status !== "completed" && run.status !== "failed"; i++) run = await td.runs.get(run.id, { wait: 30 });
    assert.deepEqual([run.status, run.output], ["completed", { cents: 300, by: "ann" }]);
    const children = (await td.runs.list({ labels: { conversation: "c1" } })).filter((r) => r.caller?.run === run.id);
    assert.equal(children.length, 1, "the child has its caller's labels, and says who started it");
    assert.deepEqual([children[0]!.caller, children[0]!.toolset, children[0]!.status], [{ run: run.id, seq: 1 }, saved.id, "completed"]);
  });

  it("a worker polling with the toolset the workflow was saved on serves the calls of runs on the derived toolset", async () => {
    const saved = await td.toolsets.saveWorkflow(toolset, {
      name: "ask",
      description: "Asks the desk.",
      code: `import { desk } from "tapedeck:tools";\nexport default async (input: { question: string }) => desk.ask({ question: input.question });`,
      input: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
      output: { type: "string" },
    });
    assert.equal(saved.kind, "saved");
    if (saved.kind !== "saved") return;
    const started = await td.runs.start({
      toolset: saved.id,
      source: `export default async () => (await workflows.ask.start({ question: "lunch?" })).result();`,
    });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    const { tasks } = (await post("/v1/tasks/poll", { tools: ["desk.ask"], waitMs: 10_000, toolset })) as PolledTasks;
    const [task] = tasks;
    assert.ok(task, "the child's call reached the worker of the base toolset");
    assert.deepEqual(task.args, { question: "lunch?" });
    assert.deepEqual(await post(`/v1/tasks/${task.id}/complete`, { lease: task.lease, result: "yes" }), { status: "ok" });
    let run: Run = started.run;
    for (let i = 0; i < 10 && run.status !== "completed" && run.status !== "failed"; i++) run = await td.runs.get(run.id, { wait: 30 });
    assert.deepEqual([run.status, run.output], ["completed", "yes"]);
    assert.deepEqual(await post("/v1/tasks/poll", { tools: ["desk.ask"], waitMs: 0, toolset: `ts_${"0".repeat(64)}` }), { tasks: [] });
  });

  it("code that does not type-check is refused with diagnostics; a malformed name is a 400", async () => {
    const refused = await td.toolsets.saveWorkflow(toolset, {
      ...QUOTE,
      code: `export default async (input: { sku: string }) => ({ cents: "free", by: input.sku });`,
    });
    assert.equal(refused.kind, "refused");
    if (refused.kind !== "refused") return;
    assert.equal(refused.diagnostics[0]?.code, "workflow-contract");
    assert.match(refused.diagnostics[0].message, /must return its output/);
    const bad = await failure(td.toolsets.saveWorkflow(toolset, { ...QUOTE, name: "not a name" }));
    assert.deepEqual([bad.status, bad.code], [400, "invalid_request"]);
    const missing = await failure(td.toolsets.saveWorkflow(`ts_${"0".repeat(64)}`, QUOTE));
    assert.deepEqual([missing.status, missing.code], [404, "not_found"]);
  });
});

/** A worker's request, as a worker of another language would send it (the SDK's worker drives these routes). */
async function post(path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminKey!}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, path);
  return response.json();
}
