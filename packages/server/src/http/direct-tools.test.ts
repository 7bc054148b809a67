import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Tapedeck } from "@tapedeck/sdk";
import { startModelFake, type FakeRequest } from "../test-support/model-fakes/index.js";
import { failure } from "./test-support/failure.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Direct tool mode end to end: the SDK's `directTools` against a real `tapedeck serve`, whose
 * toolset is the MCP fixture server (the official SDK, over stdio), driven by a scripted model
 * through the official Anthropic and OpenAI clients against loopback fakes of their APIs, so the
 * result blocks the SDK hands back are the ones the model APIs take.
 */
const FIXTURE = fileURLToPath(new URL("../../../engine/dist-test/test-support/mcp/stdio-main.js", import.meta.url));
const TOOLSET = { mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } };

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** What the fixture's `effects` tool saw, from its JSON text. */
function effectOf(text: string): { count: number; key: string | null; attemptsForKey: number } {
  return JSON.parse(text) as { count: number; key: string | null; attemptsForKey: number };
}

describe("direct tools through the SDK against tapedeck serve", () => {
  it("journals each model tool call: a read goes at once, a write waits for approval without holding the read, and is sent once with the key <session>/<seq>", async () => {
    const td = admin.namespace("alice");
    const tools = await td.directTools({
      toolset,
      session: "conv-1",
      labels: { agent: "support" },
      approval: { ask: [{ tool: "fx.effects", summary: "effect {/op}" }] },
    });
    assert.equal(tools.note, undefined, "a new session has no note");
    const names = tools.anthropic.tools.map((t) => t.name);
    assert.ok(names.includes("fx_echo") && names.includes("fx_effects"), names.join(", "));

    const fake = await startModelFake("anthropic", [
      {
        toolCalls: [
          { id: "toolu_read", name: "fx_echo", input: { text: "hello" } },
          { id: "toolu_write", name: "fx_effects", input: { op: "charge" } },
        ],
      },
      (request) => {
        const results = request.toolResults;
        assert.deepEqual(
          results.map((r) => [r.callId, r.isError ?? false]),
          [
            ["toolu_read", false],
            ["toolu_write", false],
          ],
        );
        assert.deepEqual(JSON.parse(results[0]!.content), { text: "hello" });
        return { text: "done" };
      },
    ]);
    try {
      const anthropic = new Anthropic({ baseURL: fake.baseUrl, apiKey: "test-key", maxRetries: 0 });
      const first = await anthropic.messages.create({
        model: "claude-test",
        max_tokens: 100,
        messages: [{ role: "user", content: "go" }],
        tools: tools.anthropic.tools,
      });
      const uses = first.content.filter((block) => block.type === "tool_use");
      const pending = Promise.all(uses.map((block) => tools.anthropic.handle(block)));
      // The read answers while the write waits for a human.
      const read = await tools.anthropic.handle(uses[0]!);
      // The fixture's echo has an output schema: its structured result is what the journal records, as JSON for the model.
      assert.deepEqual(JSON.parse(textOf(read.content)), { text: "hello" });
      const waiting = await tools.pending();
      assert.equal(waiting.length, 1);
      assert.equal(waiting[0]!.summary, "effect charge");
      assert.equal(waiting[0]!.tool, "fx.effects");
      assert.equal(waiting[0]!.id, `${tools.sessionId}/2`);
      assert.deepEqual(waiting[0]!.labels, { agent: "support" });
      // The approval is in the namespace's list too, and not in another namespace's.
      assert.deepEqual(
        (await td.approvals.sessions()).map((a) => a.id),
        [waiting[0]!.id],
      );
      assert.deepEqual(await admin.namespace("bob").approvals.sessions(), []);

      await tools.approve(2, { reason: "ok" });
      const results = await pending;
      const effect = effectOf(textOf(results[1]!.content));
      assert.equal(effect.key, `${tools.sessionId}/2`);
      assert.equal(effect.attemptsForKey, 1);

      // Handling the same tool call again answers the recorded result: nothing is sent again (one step, so a call asked again fails here instead of waiting).
      const again = await tools.call("anthropic", uses[1]!.name, uses[1]!.input, uses[1]!.id);
      assert.deepEqual(again.status === "done" ? again.result : again, results[1]);
      const log = JSON.parse(String((await tools.handle("fx_effects_log", {}, { toolCallId: "log-1" })).text)) as { keys: { key: string; attempts: number }[] };
      assert.deepEqual(
        log.keys.filter((k) => k.key.startsWith(tools.sessionId)).map((k) => [k.key, k.attempts]),
        [[`${tools.sessionId}/2`, 1]],
      );

      await anthropic.messages.create({
        model: "claude-test",
        max_tokens: 100,
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: first.content },
          { role: "user", content: results },
        ],
        tools: tools.anthropic.tools,
      });
      await fake.done;
    } finally {
      await fake.close();
    }
  });

  it("answers every failure as a result for the model: unknown tool, invalid arguments, a rejection with its reason", async () => {
    const td = admin.namespace("alice");
    const tools = await td.directTools({ toolset, session: "conv-2" });
    const unknown = await tools.handle("fx_ecko", {}, { toolCallId: "u1" });
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /There is no tool named "fx_ecko".*Did you mean "fx_echo"/);
    const invalid = await tools.handle("fx_echo", { text: 3 }, { toolCallId: "u2" });
    assert.equal(invalid.isError, true);
    assert.match(invalid.text, /do not match its input schema, so nothing was sent: \/text/);
    const asked = tools.handle("fx_effects", { op: "refund" }, { toolCallId: "u3" });
    const [approval] = await waitForPending(tools);
    await tools.reject(approval!.seq, { reason: "not today" });
    const rejected = await asked;
    assert.equal(rejected.isError, true);
    assert.match(rejected.text, /A human rejected the call to "fx_effects".*not today.*Nothing was sent/s);
  });

  it("answers OpenAI Responses function calls and Chat Completions tool calls with their API's shape", async () => {
    const tools = await admin.namespace("alice").directTools({ toolset, session: "conv-3", tools: ["fx.echo"] });
    const fake = await startModelFake("openai-responses", [
      { toolCalls: [{ id: "call_1", name: "fx_echo", input: { text: "from responses" } }] },
      (request) => {
        assert.deepEqual(
          request.toolResults.map((r) => [r.callId, JSON.parse(r.content) as unknown]),
          [["call_1", { text: "from responses" }]],
        );
        return { text: "ok" };
      },
    ]);
    try {
      const openai = new OpenAI({ baseURL: `${fake.baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 });
      const first = await openai.responses.create({ model: "gpt-test", input: "go", tools: tools.openai.responses.tools });
      const calls = first.output.filter((item) => item.type === "function_call");
      const outputs = await Promise.all(calls.map((item) => tools.openai.responses.handle(item)));
      await openai.responses.create({ model: "gpt-test", input: [...calls, ...outputs], tools: tools.openai.responses.tools });
      await fake.done;
    } finally {
      await fake.close();
    }
    const chat = await startModelFake("openai-chat", [
      { toolCalls: [{ id: "call_c", name: "fx_echo", input: { text: "from chat" } }] },
      (request) => {
        assert.deepEqual(
          request.toolResults.map((r) => [r.callId, JSON.parse(r.content) as unknown]),
          [["call_c", { text: "from chat" }]],
        );
        return { text: "ok" };
      },
    ]);
    try {
      const openai = new OpenAI({ baseURL: `${chat.baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 });
      const first = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "go" }], tools: tools.openai.tools });
      const message = first.choices[0]!.message;
      const answers = await Promise.all((message.tool_calls ?? []).flatMap((call) => (call.type === "function" ? [tools.openai.handle(call)] : [])));
      await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "go" }, message, ...answers], tools: tools.openai.tools });
      await chat.done;
    } finally {
      await chat.close();
    }
  });

  it("lazy tools, menu lowering (seed 002's read-only recipe): the model gets a menu, an unloaded tool says to call tool_find, tool_find loads it, and the loaded set survives a new binding", async () => {
    const options = { toolset, session: "lazy-menu", lazy: { lowering: "menu", readOnly: true }, approval: { allow: ["*"] } } as const;
    const tools = await admin.namespace("alice").directTools(options);
    const names = tools.anthropic.tools.map((t) => t.name);
    assert.ok(!names.includes("fx_echo") && names.includes("tool_find") && names.includes("fx_effects"), names.join(", "));
    const find = tools.anthropic.tools.find((t) => t.name === "tool_find")!;
    assert.match(find.description, /^fx_echo: Returns its text, as structured content and as a text block\.$/m);
    assert.match(find.description, /^fx_effects_log: /m);

    const fake = await startModelFake("anthropic", [
      { toolCalls: [{ id: "t1", name: "fx_echo", input: { text: "hi" } }] },
      { toolCalls: [{ id: "t2", name: "tool_find", input: { names: ["fx_echo"] } }] },
      { toolCalls: [{ id: "t3", name: "fx_echo", input: { text: "hi" } }] },
      { text: "done" },
    ]);
    try {
      const anthropic = new Anthropic({ baseURL: fake.baseUrl, apiKey: "test-key", maxRetries: 0 });
      const messages: Anthropic.MessageParam[] = [{ role: "user", content: "go" }];
      const seen: Anthropic.ToolResultBlockParam[] = [];
      for (;;) {
        const answer = await anthropic.messages.create({ model: "claude-test", max_tokens: 100, messages, tools: tools.anthropic.tools });
        messages.push({ role: "assistant", content: answer.content });
        const uses = answer.content.filter((block) => block.type === "tool_use");
        if (uses.length === 0) break;
        const results: Anthropic.ToolResultBlockParam[] = await Promise.all(uses.map((block) => tools.anthropic.handle(block)));
        seen.push(...results);
        messages.push({ role: "user", content: results });
      }
      await fake.done;
      assert.equal(seen[0]!.is_error, true);
      assert.match(
        textOf(seen[0]!.content),
        /The tool "fx_echo" is not loaded yet, so nothing was sent\. Call tool_find\(\{ "names": \["fx_echo"\] \}\) first/,
      );
      assert.match(textOf(seen[1]!.content), /^Loaded 1 tool; you can call it now:\n- fx_echo: /);
      assert.equal(seen[2]!.is_error, undefined);
      // The request after tool_find had fx_echo, after the menu (the prefix did not change).
      const last = fake.requests.at(-1)!.body.tools as { name: string }[];
      assert.deepEqual(
        last.slice(0, names.length).map((t) => t.name),
        names,
      );
      assert.equal(last.at(-1)!.name, "fx_echo");
    } finally {
      await fake.close();
    }
    const rebound = await admin.namespace("alice").directTools(options);
    assert.ok(
      rebound.anthropic.tools.some((t) => t.name === "fx_echo"),
      "the loaded set is rebuilt from the session's journal",
    );
  });

  it("lazy tools, anthropic lowering: deferred tools carry defer_loading and tool_find answers with tool_reference blocks only", async () => {
    const tools = await admin
      .namespace("alice")
      .directTools({ toolset, session: "lazy-anthropic", lazy: { lowering: "anthropic", readOnly: true }, approval: { allow: ["*"] } });
    const echo = tools.anthropic.tools.find((t) => t.name === "fx_echo");
    assert.equal(echo?.defer_loading, true);
    assert.equal(tools.anthropic.tools.find((t) => t.name === "tool_find")?.defer_loading, undefined);
    const fake = await startModelFake("anthropic", [
      { toolCalls: [{ id: "f1", name: "tool_find", input: { query: "echo its text" } }] },
      (request) => {
        assert.deepEqual(
          request.toolResults.map((r) => r.content),
          ["[tool_reference]"],
        );
        return { text: "done" };
      },
    ]);
    try {
      const anthropic = new Anthropic({ baseURL: fake.baseUrl, apiKey: "test-key", maxRetries: 0 });
      const first = await anthropic.messages.create({
        model: "claude-test",
        max_tokens: 100,
        messages: [{ role: "user", content: "go" }],
        tools: tools.anthropic.tools,
      });
      const results = await Promise.all(first.content.filter((b) => b.type === "tool_use").map((b) => tools.anthropic.handle(b)));
      assert.deepEqual(results[0]!.content, [{ type: "tool_reference", tool_name: "fx_echo" }]);
      await anthropic.messages.create({
        model: "claude-test",
        max_tokens: 100,
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: first.content },
          { role: "user", content: results },
        ],
        tools: tools.anthropic.tools,
      });
      await fake.done;
    } finally {
      await fake.close();
    }
  });

  it("lazy tools, openai lowering: a namespace of deferred functions and a client tool_search; the model searches, then calls the namespaced function, which is journaled and answered", async () => {
    const tools = await admin
      .namespace("alice")
      .directTools({ toolset, session: "lazy-openai", lazy: { lowering: "openai", tools: ["fx.effects"] }, approval: { allow: ["*"] } });
    const search = tools.openai.responses.tools.find((t) => t.type === "tool_search");
    assert.equal(search?.type === "tool_search" ? search.execution : undefined, "client");
    const namespace = tools.openai.responses.tools.find((t) => t.type === "namespace");
    assert.equal(namespace?.name, "fx");
    assert.deepEqual(namespace?.type === "namespace" ? namespace.tools.map((t) => [t.name, t.defer_loading]) : [], [["fx_effects", true]]);
    assert.ok(
      tools.openai.responses.tools.some((t) => t.type === "function" && t.name === "fx_echo" && t.defer_loading === undefined),
      "eager tools stay top-level",
    );

    const inputItems = (request: FakeRequest) => request.body.input as { type: string; call_id?: string; tools?: unknown }[];
    const fake = await startModelFake("openai-responses", [
      { toolSearches: [{ id: "call_ts", input: { names: ["fx_effects"] } }] },
      (request) => {
        const output = inputItems(request).find((item) => item.type === "tool_search_output");
        assert.equal(output?.call_id, "call_ts");
        const loaded = output?.tools as { type: string; name: string; tools: { name: string; defer_loading?: boolean }[] }[];
        assert.deepEqual(
          loaded.map((t) => [t.type, t.name, t.tools.map((f) => [f.name, f.defer_loading])]),
          [["namespace", "fx", [["fx_effects", undefined]]]],
        );
        return {
          toolCalls: [
            { id: "call_ns", name: "fx_effects", namespace: "fx", input: { op: "namespaced" } },
            { id: "call_elsewhere", name: "fx_effects", namespace: "crm", input: { op: "elsewhere" } },
          ],
        };
      },
      (request) => {
        const [sent, elsewhere] = request.toolResults;
        assert.deepEqual([sent?.callId, elsewhere?.callId], ["call_ns", "call_elsewhere"]);
        assert.equal(effectOf(sent!.content).key, `${tools.sessionId}/1`, "journaled as the session's call #1 and sent with its key");
        assert.match(elsewhere!.content, /The tool "fx_effects" is not in the namespace "crm", so nothing was called\. It is in the namespace "fx"/);
        return { text: "done" };
      },
    ]);
    try {
      const openai = new OpenAI({ baseURL: `${fake.baseUrl}/v1`, apiKey: "test-key", maxRetries: 0 });
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "go" }];
      for (;;) {
        const response = await openai.responses.create({ model: "gpt-test", input, tools: tools.openai.responses.tools });
        const calls = response.output.filter((item) => item.type === "tool_search_call" || item.type === "function_call");
        if (calls.length === 0) break;
        input.push(...calls, ...(await Promise.all(calls.map((item) => tools.openai.responses.handle(item)))));
      }
      await fake.done;
    } finally {
      await fake.close();
    }
    const again = await tools.openai.responses.handle({ type: "function_call", call_id: "call_ns", name: "fx_effects", namespace: "fx", arguments: "{}" });
    assert.equal(again.type === "function_call_output" && typeof again.output === "string" ? effectOf(again.output).key : undefined, `${tools.sessionId}/1`);
    const log = JSON.parse((await tools.handle("fx_effects_log", {}, { toolCallId: "log-ns" })).text) as { keys: { key: string; attempts: number }[] };
    assert.deepEqual(
      log.keys.filter((k) => k.key.startsWith(tools.sessionId)).map((k) => [k.key, k.attempts]),
      [[`${tools.sessionId}/1`, 1]],
      "sent once; the call in the wrong namespace was not sent",
    );
    // Chat Completions has no deferred loading: the menu.
    assert.ok(tools.openai.tools.some((t) => t.function.name === "tool_find"));
    // A Responses model that calls a deferred tool before searching is told to use its tool_search.
    const fresh = await admin
      .namespace("alice")
      .directTools({ toolset, session: "lazy-openai-unloaded", lazy: { lowering: "openai", tools: ["fx.effects"] }, approval: { allow: ["*"] } });
    const early = await fresh.openai.responses.handle({ type: "function_call", call_id: "call_early", name: "fx_effects", namespace: "fx", arguments: "{}" });
    assert.match(
      early.type === "function_call_output" && typeof early.output === "string" ? early.output : "",
      /"fx_effects" is not loaded yet, so nothing was sent\. Call tool_search\(\{ "names": \["fx_effects"\] \}\) first/,
    );
  });

  it("keeps a session inside its caller's scope: the same name in another namespace is another session, and a key without its labels finds none", async () => {
    const alices = await admin.namespace("alice").directTools({ toolset, session: "private", labels: { team: "b" } });
    const bobs = await admin.namespace("bob").directTools({ toolset, session: "private" });
    assert.notEqual(bobs.sessionId, alices.sessionId);
    const teamA = server.client(await createKey(server.dataDir, "--namespace", "alice", "--label", "team=a"));
    const error = await failure(teamA.directTools({ toolset, session: "private" }));
    assert.equal(error.status, 404);
    assert.match(error.message, /No session "private"/);
    const pending = await failure(teamA.approvals.approveSessionCall("private", 1));
    assert.equal(pending.status, 404);
  });

  it("keeps a session's labels as it was created with them: other labels are refused, binding nothing; the same in another order or none bind, and a repeated tool call id is answered, not sent again", async () => {
    const td = admin.namespace("alice");
    const labels = { agent: "support", team: "b" };
    const first = await td.directTools({ toolset, session: "labelled", labels, approval: { allow: ["*"] } });
    const sent = await first.handle("fx_effects", { op: "label" }, { toolCallId: "toolu_l" });
    assert.equal(effectOf(sent.text).key, `${first.sessionId}/1`);

    const refused = await failure(td.directTools({ toolset, session: "labelled", labels: { agent: "billing", team: "b" }, tools: ["fx.effects"] }));
    assert.equal(refused.code, "conflict");
    assert.match(refused.message, /has the labels \{"agent":"support","team":"b"\}, and directTools was given \{"agent":"billing","team":"b"\}/);
    assert.match(refused.message, /nothing was bound.*use another session for other labels/s);
    const dropped = await failure(td.directTools({ toolset, session: "labelled", labels: { agent: "support" } }));
    assert.equal(dropped.code, "conflict", "a label left out is another set of labels");

    const reordered = await td.directTools({ toolset, session: "labelled", labels: { team: "b", agent: "support" }, approval: { allow: ["*"] } });
    assert.equal(reordered.binding, first.binding);
    assert.equal(reordered.note, undefined, "the refused binds recorded nothing");
    const unnamed = await td.directTools({ toolset, session: "labelled", approval: { allow: ["*"] } });
    const again = await unnamed.handle("fx_effects", { op: "label" }, { toolCallId: "toolu_l" });
    assert.deepEqual(again, sent, "the same call identity: answered from the journal");
    const log = JSON.parse((await unnamed.handle("fx_effects_log", {}, { toolCallId: "log-l" })).text) as { keys: { key: string; attempts: number }[] };
    assert.deepEqual(
      log.keys.filter((k) => k.key.startsWith(first.sessionId)).map((k) => [k.key, k.attempts]),
      [[`${first.sessionId}/1`, 1]],
    );
  });

  it("refuses bad options with every mistake and its path, binding nothing", async () => {
    const error = await failure(
      admin.namespace("alice").directTools({
        toolset,
        session: "bad",
        approval: { ask: [{ tool: "fx.effects", args: [{ pointer: "op", equals: 1 }] }], unmatched: "sometimes" as "ask" },
        lazy: { lowering: "lazy" as "menu" },
      }),
    );
    assert.equal(error?.code, "invalid_request");
    assert.match(error.message, /directTools\.approval\.ask\[0\]\.args\[0\]\.pointer/);
    assert.match(error.message, /directTools\.approval\.unmatched/);
    assert.match(error.message, /directTools\.lazy\.lowering/);
  });
});

/** Polls the session's pending approvals until one shows (with a deadline that fails clearly). */
async function waitForPending(tools: { pending(): Promise<readonly { seq: number }[]> }): Promise<readonly { seq: number }[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pending = await tools.pending();
    if (pending.length > 0) return pending;
    if (Date.now() > deadline) throw new Error("no approval became pending within 10 s");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A tool result's content as text: the string, or its text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  assert.ok(Array.isArray(content), `a tool result's content is a string or blocks, not ${JSON.stringify(content)}`);
  return (content as { type: string; text?: string }[]).map((block) => (block.type === "text" ? (block.text ?? "") : `[${block.type}]`)).join("\n");
}
