// Lazy tools under each lowering. The type checks compile only if the structural types are
// assignable to the official SDKs' (`@anthropic-ai/sdk`, `openai`).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { getEncoding } from "js-tiktoken";
import type { PinnedTool, PinnedToolset } from "@tapedeck/protocol";
import { DEFAULT_POLICY } from "../toolset/policy.js";
import { toolsetOf } from "../toolset/pin.js";
import { searchCorpus } from "../test-support/tool-search-corpus.js";
import { anthropicToolFindResult, anthropicTools } from "./anthropic-lowering.js";
import { bindDirectTools, type BoundTable } from "./direct-binding.js";
import { checkDirectOptions } from "./direct-options.js";
import { failureText } from "./failure-text.js";
import { firstRequestTokens } from "./first-request-tokens.js";
import { MENU_LINE_MAX } from "./lazy-menu.js";
import { chatTools, menuDefinitions } from "./menu-lowering.js";
import { responsesTools, toolSearchArguments, toolSearchOutput, type ResponsesToolSearchCall } from "./openai-lowering.js";
import { NAMESPACE_DESCRIPTION_MAX } from "./tool-namespaces.js";
import { findTools, loadedTools, toolFindText, unloadedCall, type ToolFindRecord } from "./tool-find.js";

function bind(toolset: PinnedToolset, options: unknown): BoundTable {
  const checked = checkDirectOptions(options);
  if (!checked.ok) assert.fail(JSON.stringify(checked.errors));
  return bindDirectTools(toolset, checked.options);
}

function find(table: BoundTable, toolset: PinnedToolset, input: unknown): ToolFindRecord {
  const outcome = findTools(input, table, toolset);
  if (!outcome.ok) assert.fail(failureText(outcome.failure));
  return outcome.record;
}

const corpus = searchCorpus();

/** Seed 002's flat table: reads annotated read-only, writes not. */
function tiktok(): PinnedTool[] {
  const tool = (name: string, description: string, readOnly: boolean): PinnedTool => ({
    group: "tiktok",
    name,
    source: "mcp",
    description,
    inputSchema: { type: "object", properties: { advertiser_id: { type: "string" } } },
    policy: DEFAULT_POLICY,
    ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
  });
  return [
    tool("campaign_get", "Get campaigns of an advertiser.", true),
    tool("ad_list", "List the ads of a campaign.", true),
    tool("report_search", "Search reporting data by dimension and metric.", true),
    tool("campaign_create", "Create a campaign.", false),
    tool("ad_delete", "Delete an ad.", false),
  ];
}

describe("lazy tools: the menu lowering (any API)", () => {
  const table = bind(corpus, { lazy: { lowering: "menu" } });

  it("sends tool_find with a menu of one-line summaries (≤ 160 characters) instead of the lazy definitions", () => {
    const tools = menuDefinitions(table, []);
    assert.deepEqual(
      tools.map((t) => t.name),
      ["tool_find", "fetch_blob"],
    );
    const menu = tools[0]!.description.split("\n").slice(2);
    assert.equal(menu.length, corpus.tools.length);
    for (const line of menu) assert.ok(line.length <= MENU_LINE_MAX && !line.includes("\n"), line);
    assert.ok(menu.includes("github_create_issue: Create a new issue in a GitHub repository."));
  });

  it("loads definitions by name or by a BM25 query, at most 20, and appends them to the tools in load order", () => {
    const byName = find(table, corpus, { names: ["slack_slack_post_message", "github_create_issue", "no_such_tool"] });
    assert.deepEqual(byName, { loaded: ["slack_slack_post_message", "github_create_issue"], unknown: ["no_such_tool"] });
    const byQuery = find(table, corpus, { query: "create an issue in a github repository" });
    assert.ok(byQuery.loaded.length <= 20 && byQuery.loaded.length > 0);
    assert.equal(byQuery.loaded[0], "github_create_issue");
    const loaded = loadedTools([byName, byQuery], table);
    const names = menuDefinitions(table, loaded).map((t) => t.name);
    assert.deepEqual(names.slice(0, 4), ["tool_find", "fetch_blob", "slack_slack_post_message", "github_create_issue"], "appended: the prefix is stable");
    assert.equal(new Set(names).size, names.length);
    assert.match(toolFindText(byName, table), /^Loaded 2 tools; you can call them now:\n- slack_slack_post_message: .*\n {2}input schema: \{"type":"object"/);
    assert.match(toolFindText(byName, table), /No lazy tool is named "no_such_tool"\.$/);
    assert.equal(find(table, corpus, { query: "anything at all about everything data list" }).loaded.length, 20);
  });

  it("answers bad tool_find arguments as invalid arguments the model can fix", () => {
    for (const input of [{}, { names: "x" }, { query: 3 }, null, { query: "  the of  " }]) {
      const outcome = findTools(input, table, corpus);
      assert.ok(!outcome.ok, JSON.stringify(input));
      assert.match(failureText(outcome.failure), /^The arguments for "tool_find" do not match/);
    }
  });

  it("rebuilds the loaded set from the recorded tool_find results alone, dropping tools the binding no longer has as lazy", () => {
    const records: ToolFindRecord[] = [{ loaded: ["github_get_issue"] }, { loaded: ["github_get_issue", "slack_slack_post_message"] }];
    assert.deepEqual(loadedTools(records, table), ["github_get_issue", "slack_slack_post_message"]);
    assert.deepEqual(loadedTools(records, bind(corpus, { lazy: { lowering: "menu" } })), loadedTools(records, table), "a pure function of the records");
    const fewer = bind(corpus, { lazy: { lowering: "menu", tools: ["slack.*"] } });
    assert.deepEqual(loadedTools(records, fewer), ["slack_slack_post_message"]);
  });

  it("answers a call of an unloaded tool with guidance to call tool_find first", () => {
    const failure = unloadedCall("stripe_create_refund", table, []);
    assert.ok(failure);
    assert.match(
      failureText(failure),
      /"stripe_create_refund" is not loaded yet, so nothing was sent\. Call tool_find\(\{ "names": \["stripe_create_refund"\] \}\) first/,
    );
    assert.equal(unloadedCall("stripe_create_refund", table, ["stripe_create_refund"]), undefined);
    assert.equal(unloadedCall("tool_find", table, []), undefined);
  });

  it("is what Chat Completions always gets (it has no deferred loading), whatever the lowering", () => {
    const anthropicTable = bind(corpus, { lazy: { lowering: "anthropic" } });
    const chat: OpenAI.Chat.ChatCompletionTool[] = chatTools(anthropicTable, []);
    assert.deepEqual(
      chat.map((t) => t.type === "function" && t.function.name),
      ["tool_find", "fetch_blob"],
    );
  });
});

describe("lazy tools: seed 002's recipe (read-only tools made lazy)", () => {
  const toolset = toolsetOf(tiktok());
  const table = bind(toolset, { lazy: { lowering: "menu", readOnly: true } });

  it("puts the reads on the menu and keeps the writes eager", () => {
    assert.deepEqual(
      menuDefinitions(table, []).map((t) => t.name),
      ["tiktok_ad_delete", "tiktok_campaign_create", "tool_find", "fetch_blob"],
    );
    assert.deepEqual(table.own.get("tool_find")!.description.split("\n").slice(2), [
      "tiktok_ad_list: List the ads of a campaign.",
      "tiktok_campaign_get: Get campaigns of an advertiser.",
      "tiktok_report_search: Search reporting data by dimension and metric.",
    ]);
  });
});

describe("lazy tools: the anthropic lowering", () => {
  const table = bind(corpus, { lazy: { lowering: "anthropic", tools: ["github.*", "slack.*"] } });

  function typeChecks(): unknown[] {
    const tools: Anthropic.Messages.Tool[] = anthropicTools(table, []);
    const params: Anthropic.Messages.MessageCreateParams["tools"] = anthropicTools(table, []);
    const result: Anthropic.Messages.ToolResultBlockParam = anthropicToolFindResult("toolu_1", { loaded: ["github_create_issue"] }, table);
    const turn: Anthropic.Messages.MessageParam = { role: "user", content: [result] };
    return [tools, params, turn];
  }

  it("sends every tool, the lazy ones first with defer_loading, never every tool deferred, never cache_control", () => {
    assert.equal(typeChecks().length, 3);
    const tools = anthropicTools(table, []);
    const deferred = tools.filter((t) => t.defer_loading === true);
    assert.equal(tools.length, corpus.tools.length + 2);
    assert.ok(deferred.length > 0 && deferred.length < tools.length);
    assert.deepEqual(
      tools.slice(0, deferred.length).map((t) => t.defer_loading),
      deferred.map(() => true),
      "deferred tools come first, so the last tool (where a harness puts cache_control) is eager",
    );
    assert.deepEqual(
      tools.slice(-2).map((t) => [t.name, t.defer_loading]),
      [
        ["tool_find", undefined],
        ["fetch_blob", undefined],
      ],
    );
    assert.ok(tools.every((t) => !("cache_control" in t)));
    assert.deepEqual(anthropicTools(table, ["github_create_issue"]), tools, "loading a tool does not change the tools block");
    assert.doesNotMatch(table.own.get("tool_find")!.description, /Tools you can load/, "no menu: the API knows the deferred tools");
  });

  it("answers tool_find with tool_reference blocks only (no text next to them), and with text when nothing matched", () => {
    const record = find(table, corpus, { query: "post a message to a slack channel" });
    const result = anthropicToolFindResult("toolu_1", record, table);
    assert.ok(Array.isArray(result.content) && result.content.length === record.loaded.length && record.loaded.length > 0);
    assert.ok(result.content.every((block) => block.type === "tool_reference" && record.loaded.includes(block.tool_name)));
    assert.ok(result.content.some((block) => block.tool_name === "slack_slack_post_message"));
    const none = anthropicToolFindResult("toolu_2", { loaded: [], unknown: ["x"] }, table);
    assert.equal(typeof none.content, "string");
  });

  it("falls back to the menu under another lowering", () => {
    const menu = bind(corpus, { lazy: { lowering: "menu" } });
    assert.deepEqual(
      anthropicTools(menu, []).map((t) => t.name),
      ["tool_find", "fetch_blob"],
    );
    assert.equal(typeof anthropicToolFindResult("toolu_3", { loaded: ["github_create_issue"] }, menu).content, "string");
  });
});

describe("lazy tools: the openai lowering (Responses tool search, executed by the client)", () => {
  const table = bind(corpus, { lazy: { lowering: "openai", tools: ["github.*"] } });

  function typeChecks(): unknown[] {
    const tools: OpenAI.Responses.Tool[] = responsesTools(table, []);
    const params: OpenAI.Responses.ResponseCreateParams["tools"] = responsesTools(table, []);
    const call: OpenAI.Responses.ResponseToolSearchCall = {
      type: "tool_search_call",
      id: "ts_1",
      call_id: "call_1",
      arguments: { query: "issue" },
      execution: "client",
      status: "completed",
    };
    const ours: ResponsesToolSearchCall = call;
    const output: OpenAI.Responses.ResponseToolSearchOutputItemParam = toolSearchOutput(ours, { loaded: ["github_create_issue"] }, table);
    const input: OpenAI.Responses.ResponseInput = [call, output];
    return [tools, params, input];
  }

  it("puts the lazy functions, deferred, in one namespace per group, keeps the eager ones top-level, and adds a client-executed tool_search taking tool_find's arguments", () => {
    assert.equal(typeChecks().length, 3);
    const tools = responsesTools(table, []);
    const search = tools.at(-1)!;
    assert.ok(search.type === "tool_search" && search.execution === "client");
    assert.deepEqual(Object.keys((search.parameters as { properties: object }).properties), ["names", "query"]);
    const namespaces = tools.filter((t) => t.type === "namespace");
    assert.deepEqual(
      namespaces.map((n) => n.name),
      ["github"],
    );
    const github = namespaces[0]!;
    const lazyGithub = corpus.tools.filter((t) => t.group === "github").map((t) => `github_${t.name}`);
    assert.deepEqual(github.tools.map((t) => t.name).sort(), lazyGithub.sort());
    assert.ok(github.tools.every((t) => t.defer_loading === true && typeof t.parameters === "object"));
    assert.ok(github.description.length <= NAMESPACE_DESCRIPTION_MAX, github.description);
    assert.match(
      github.description,
      new RegExp(`^Tools of MCP server "github" \\(${lazyGithub.length}\\), loaded with tool_search: github_[a-z_]+, .* and \\d+ more\\.$`),
    );
    const functions = tools.filter((t) => t.type === "function");
    assert.ok(
      functions.every((t) => t.name !== "tool_find"),
      "the API's own tool search replaces tool_find",
    );
    assert.ok(functions.every((t) => !t.name.startsWith("github_") && t.defer_loading === undefined));
    assert.equal(functions.length + github.tools.length, corpus.tools.length + table.own.size - 1);
  });

  it("gives every group of a fully lazy table its own namespace, with a distinct valid name and a bounded description", () => {
    const all = bind(corpus, { lazy: { lowering: "openai" } });
    const namespaces = responsesTools(all, []).filter((t) => t.type === "namespace");
    const groups = [...new Set(corpus.tools.map((t) => t.group))].sort();
    assert.deepEqual(
      namespaces.map((n) => n.name),
      groups,
    );
    const inner = namespaces.flatMap((n) => n.tools.map((t) => t.name));
    assert.equal(inner.length, corpus.tools.length);
    assert.equal(new Set(inner).size, inner.length, "every lazy tool in exactly one namespace");
    for (const n of namespaces) {
      assert.ok(n.description.length <= NAMESPACE_DESCRIPTION_MAX && n.description.includes(n.tools[0]!.name), n.description);
    }
  });

  it("names a namespace after its group unless that is not a valid name or is taken by a tool's model name", () => {
    const tool = (group: string, name: string): PinnedTool => ({
      group,
      name,
      source: "host",
      description: `${name}.`,
      inputSchema: { type: "object" },
      policy: DEFAULT_POLICY,
    });
    // The eager tool "crm.contacts" is called crm_contacts by the model: the group crm_contacts cannot be that namespace.
    const toolset = toolsetOf([tool("crm", "contacts"), tool("crm_contacts", "find"), tool("crm_contacts", "merge")]);
    const table = bind(toolset, { lazy: { lowering: "openai", tools: ["crm_contacts.*"] } });
    const tools = responsesTools(table, []);
    assert.deepEqual(
      tools.map((t) => [t.type, t.type === "tool_search" ? "" : t.name]),
      [
        ["function", "crm_contacts"],
        ["function", "fetch_blob"],
        ["namespace", "crm_contacts_2"],
        ["tool_search", ""],
      ],
    );
    const namespace = tools[2]!;
    assert.ok(namespace.type === "namespace");
    assert.deepEqual(
      namespace.tools.map((t) => t.name),
      ["crm_contacts_find", "crm_contacts_merge"],
    );
    assert.equal(namespace.description, 'Tools of group "crm_contacts" (2), loaded with tool_search: crm_contacts_find, crm_contacts_merge.');
  });

  it("answers a tool_search_call with a tool_search_output holding the loaded definitions inside their namespaces", () => {
    const call: ResponsesToolSearchCall = {
      type: "tool_search_call",
      call_id: "call_7",
      arguments: JSON.stringify({ query: "create an issue" }),
      execution: "client",
    };
    const args = toolSearchArguments(call);
    assert.ok(args.ok);
    const record = find(table, corpus, args.input);
    const output = toolSearchOutput(call, record, table);
    assert.equal(output.call_id, "call_7");
    assert.deepEqual(
      output.tools.map((t) => [t.type, t.name]),
      [["namespace", "github"]],
    );
    const namespace = output.tools[0]!;
    assert.ok(namespace.type === "namespace");
    assert.equal(namespace.description, responsesTools(table, []).find((t) => t.type === "namespace")!.description);
    assert.deepEqual(
      namespace.tools.map((t) => t.name),
      record.loaded,
    );
    assert.ok(namespace.tools.every((t) => t.defer_loading === undefined && typeof t.parameters === "object"));
    assert.ok(!toolSearchArguments({ ...call, arguments: "{oops" }).ok);
  });
});

describe("first-request tokens of the 325-tool corpus", () => {
  it("are far fewer under each lazy lowering than eager (o200k_base)", () => {
    const o200k = getEncoding("o200k_base");
    const tokens = firstRequestTokens(corpus, (text) => o200k.encode(text).length);
    assert.equal(tokens.tools, 325);
    const { anthropic, openaiResponses } = tokens;
    assert.ok(anthropic.menu < anthropic.eager * 0.25, JSON.stringify(tokens));
    assert.ok(anthropic.native < anthropic.eager * 0.05, JSON.stringify(tokens));
    assert.ok(openaiResponses.menu < openaiResponses.eager * 0.25, JSON.stringify(tokens));
    assert.ok(openaiResponses.native < openaiResponses.eager * 0.15, JSON.stringify(tokens));
  });
});
