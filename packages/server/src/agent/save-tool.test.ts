import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { JournalEntry } from "@tapedeck/protocol";
import type { Tapedeck, ToolGrantRequest } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * Sandboxed user tools through a real `tapedeck serve` and the SDK: a toolset file's
 * `userTools`, called by a script, each host call a `call.sub` of the run's journal; and the
 * `save_tool` agent tool — type-checked, tested in the sandbox in virtual time with mocks,
 * registered by deriving a toolset the agent's later calls use, with grants beyond the
 * harness's ceiling held for a human's approval.
 */

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create({})).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

const SLUG = {
  group: "text",
  name: "slug",
  description: "Turns a title into a URL slug.",
  code: `export default (input: { title: string }) => ({ slug: input.title.trim().toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") });`,
  inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
  outputSchema: { type: "object", properties: { slug: { type: "string" } }, required: ["slug"] },
  tests: [
    { name: "plain", input: { title: "Hello World" }, output: { slug: "hello-world" } },
    { name: "punctuation", input: { title: "  Tapedeck: durable tools! " }, output: { slug: "tapedeck-durable-tools" } },
  ],
};

describe("user tools through the server", () => {
  it("a toolset file's user tool is called by a script; its workspace writes are call.sub entries of the run's journal", async () => {
    const { id } = await admin.toolsets.create({
      userTools: {
        notes: {
          keep: {
            description: "Keeps a note in the workspace and answers its length.",
            code: `import { workspace } from "tapedeck:tools";
              export default async (input: { note: string }) => { await workspace.write({ path: "note.txt", content: input.note }); return input.note.length; };`,
            inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
            outputSchema: { type: "number" },
            grants: { workspace: "rw" },
          },
        },
      },
    });
    const started = await admin
      .namespace("alice")
      .runs.start({ toolset: id, source: `import { notes } from "tapedeck:tools";\nexport default async () => notes.keep({ note: "hello" });` });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    const run = await admin.runs.get(started.run.id, { wait: 30 });
    assert.equal(run.status, "completed", JSON.stringify(run));
    const { entries } = await admin.runs.journal(run.id);
    const sub = entries.filter((e): e is Extract<JournalEntry, { kind: "call.sub" }> => e.kind === "call.sub");
    assert.deepEqual(
      sub.map((e) => [e.key, e.tool]),
      [[`${run.id}/1.1`, "workspace.write"]],
    );
  });

  it("save_tool saves a tested tool on a derived toolset the agent's later scripts call; type errors and failing cases come back for the model to fix", async () => {
    const tools = admin.namespace("alice").agentTools({ toolset, labels: { conversation: "tools" }, toolGrants: {} });
    assert.ok(
      tools.definitions.some((d) => d.name === "save_tool"),
      "offered when the harness sets toolGrants",
    );
    const wrongType = await tools.handle(
      "save_tool",
      { ...SLUG, code: `export default (input: { title: string }) => {\n  const n: number = input.title;\n  return { slug: String(n) };\n};` },
      { toolCallId: "s0" },
    );
    assert.equal(wrongType.isError, true);
    assert.match(wrongType.content, /was not saved/);
    assert.match(wrongType.content, /line 2/);
    assert.match(wrongType.content, /const n: number = input\.title/, "with the code frame");
    const failing = await tools.handle("save_tool", { ...SLUG, code: SLUG.code.replace(`.replace(/^-|-$/g, "")`, "") }, { toolCallId: "s1" });
    assert.equal(failing.isError, true);
    assert.match(
      failing.content,
      /Failing test cases \(1 of 2\):\n- punctuation: expected \{"slug":"tapedeck-durable-tools"\}, got \{"slug":"tapedeck-durable-tools-"\}/,
    );
    assert.equal(tools.toolset, toolset, "nothing was saved");
    const saved = await tools.handle("save_tool", SLUG, { toolCallId: "s2" });
    assert.equal(saved.isError, false, saved.content);
    assert.match(saved.content, /Saved the tool text\.slug \(2 test cases passed\)/);
    assert.notEqual(tools.toolset, toolset, "the agent now uses the derived toolset");
    const ran = await tools.handle(
      "run_script",
      { code: `import { text } from "tapedeck:tools";\nexport default async () => (await text.slug({ title: "Durable Runs" })).slug;`, wait: 30 },
      { toolCallId: "s3" },
    );
    assert.equal(ran.isError, false, ran.content);
    assert.match(ran.content, /completed\. Output \(JSON\):\n"durable-runs"/);
    assert.ok(!(await admin.toolsets.get(toolset)).toolset.tools.some((t) => t.group === "text"), "the toolset it was saved on is unchanged");
  });

  it("a tool whose capabilities go beyond the ceiling is held for approval: refused without an approver, saved once approved; its fetch is tested against mocks", async () => {
    const fetcher = {
      group: "probe",
      name: "status",
      description: "Answers the status of the example API.",
      code: `export default async () => ({ status: (await fetch("https://api.example.com/v1/health")).status });`,
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { status: { type: "number" } }, required: ["status"] },
      capabilities: { http: [{ host: "api.example.com", pathPrefix: "/v1/", methods: ["GET"] }] },
      tests: [{ input: {}, output: { status: 204 }, http: [{ url: "https://api.example.com/v1/health", status: 204 }] }],
    };
    const ceiling = { http: [{ host: "*.example.com", pathPrefix: "/v1/", methods: ["GET"] }] };
    const within = admin.namespace("alice").agentTools({ toolset, labels: { conversation: "ceiling" }, toolGrants: { ceiling } });
    const clash = await within.handle("save_tool", { ...fetcher, group: "web" }, { toolCallId: "c0" });
    assert.equal(clash.isError, true, "a group named like one of the built-in library's is refused");
    assert.match(clash.content, /web.*group of the built-in tool library/s);
    assert.equal((await within.handle("save_tool", fetcher, { toolCallId: "c1" })).isError, false, "within the ceiling: saved without asking");
    const strict = admin.namespace("alice").agentTools({ toolset, labels: { conversation: "strict" }, toolGrants: {} });
    const held = await strict.handle("save_tool", fetcher, { toolCallId: "c2" });
    assert.equal(held.isError, true);
    assert.match(held.content, /asks for more than this agent may grant its tools without a human's approval: http GET api\.example\.com\/v1\//);
    assert.equal(strict.toolset, toolset);
    const asked: ToolGrantRequest[] = [];
    const approving = admin.namespace("alice").agentTools({
      toolset,
      labels: { conversation: "approved" },
      toolGrants: { approve: (request) => (asked.push(request), request.beyond.length === 1) },
    });
    const approved = await approving.handle("save_tool", fetcher, { toolCallId: "c3" });
    assert.equal(approved.isError, false, approved.content);
    assert.deepEqual(
      asked.map((r) => [r.group, r.name, r.beyond]),
      [["probe", "status", ["http GET api.example.com/v1/"]]],
    );
    const declined = await approving.handle("save_tool", { ...fetcher, capabilities: { ...fetcher.capabilities, workspace: "rw" } }, { toolCallId: "c4" });
    assert.match(declined.content, /A human declined/);
  });

  it("a test's http mock may give its body as JSON: answered as its JSON text with content-type application/json", async () => {
    const saved = await admin.toolsets.saveTool(toolset, {
      group: "probe",
      name: "items",
      description: "Counts the example API's items.",
      code: `export default async () => { const answer = await fetch("https://api.example.com/v1/items"); return { type: answer.headers.get("content-type"), count: ((await answer.json()) as { items: unknown[] }).items.length }; };`,
      inputSchema: { type: "object" },
      capabilities: { http: [{ host: "api.example.com", pathPrefix: "/v1/", methods: ["GET"] }] },
      tests: [{ input: {}, output: { type: "application/json", count: 2 }, http: [{ url: "https://api.example.com/v1/items", body: { items: [1, 2] } }] }],
    });
    assert.deepEqual([saved.saved, saved.problems, saved.tests.map((t) => t.ok)], [true, [], [true]], JSON.stringify(saved));
  });
});
