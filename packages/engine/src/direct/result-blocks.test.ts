// The results of direct tools in each model API's shape. The type checks compile only if the
// structural types are assignable to the official SDKs' (`@anthropic-ai/sdk`, `openai`).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { imageResult, mixedResult, PNG_BASE64 } from "../test-support/mcp/content-samples.js";
import { directFailureOf, failureContent, type DirectFailure } from "./failure-text.js";
import { EMPTY_RESULT_TEXT, contentOfMcpResult, contentOfValue, type ModelContent } from "./model-content.js";
import { anthropicToolResult, chatToolMessage, genericToolResult, responsesFunctionCallOutput } from "./result-blocks.js";

const image: ModelContent = {
  parts: [
    { type: "text", text: "a chart" },
    { type: "image", mimeType: "image/png", data: PNG_BASE64 },
    { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz48L3N2Zz4=" },
  ],
  isError: false,
};

function typeChecks(): unknown[] {
  const anthropic: Anthropic.Messages.ToolResultBlockParam = anthropicToolResult("toolu_1", image);
  const beta: Anthropic.Beta.BetaToolResultBlockParam = anthropicToolResult("toolu_1", image);
  const turn: Anthropic.Messages.MessageParam = { role: "user", content: [anthropic] };
  const responses: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = responsesFunctionCallOutput("call_1", image);
  const input: OpenAI.Responses.ResponseInput = [responses];
  const chat: OpenAI.Chat.ChatCompletionToolMessageParam = chatToolMessage("call_1", image);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [chat];
  return [anthropic, beta, turn, responses, input, chat, messages];
}

describe("results of direct tools for the model", () => {
  it("are the official SDKs' types", () => {
    assert.equal(typeChecks().length, 7);
  });

  it("keep text and images with their MIME type, and describe in one line what an API cannot take", () => {
    const anthropic = anthropicToolResult("toolu_1", image);
    assert.deepEqual(anthropic.content, [
      { type: "text", text: "a chart" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
      { type: "text", text: "[image image/svg+xml, 11 bytes — not shown: the model API takes JPEG, PNG, GIF and WebP images only]" },
    ]);
    assert.equal(anthropic.is_error, undefined);
    const responses = responsesFunctionCallOutput("call_1", image);
    assert.deepEqual(responses.output[1], { type: "input_image", image_url: `data:image/png;base64,${PNG_BASE64}`, detail: "auto" });
    assert.equal(
      chatToolMessage("call_1", image).content,
      "a chart\n[image image/png, 70 bytes — Chat Completions takes no image in a tool result; not shown]\n[image image/svg+xml, 11 bytes — Chat Completions takes no image in a tool result; not shown]",
    );
    assert.deepEqual(genericToolResult(image).content, image.parts);
  });

  it("read MCP results through the journal's own mapping: text, images, lossy parts said so, isError passed through", () => {
    const fromImage = contentOfMcpResult(imageResult());
    assert.deepEqual(
      fromImage.parts.map((p) => p.type),
      ["image", "text"],
    );
    const mixed = contentOfMcpResult(mixedResult());
    assert.equal(mixed.lossy, true);
    const text = genericToolResult(mixed).text;
    assert.match(
      text,
      /^one block of each kind follows\n\[audio audio\/wav, .* — not kept\]\n\[resource link fixture:\/\/files\/report\.pdf \(report\.pdf\)\]\n\[binary resource fixture:\/\/blobs\/six-bytes, application\/octet-stream, 6 bytes — not kept\]$/,
    );
    const failed = contentOfMcpResult({ content: [{ type: "text", text: "no such repo" }], isError: true });
    assert.equal(failed.isError, true);
    assert.deepEqual(anthropicToolResult("toolu_2", failed), { type: "tool_result", tool_use_id: "toolu_2", content: "no such repo", is_error: true });
    const structured = contentOfMcpResult({ content: [{ type: "text", text: '{"n":1}' }], structuredContent: { n: 1 } });
    assert.equal(genericToolResult(structured).text, '{\n  "n": 1\n}');
  });

  it("render a journaled value the same way: strings as text, other JSON indented, never an empty block", () => {
    assert.equal(genericToolResult(contentOfValue("hello")).text, "hello");
    assert.equal(genericToolResult(contentOfValue({ a: [1] })).text, '{\n  "a": [\n    1\n  ]\n}');
    assert.equal(genericToolResult(contentOfValue("")).text, EMPTY_RESULT_TEXT);
    assert.equal(genericToolResult(contentOfValue(null)).text, EMPTY_RESULT_TEXT);
    assert.equal(genericToolResult(contentOfValue({ content: [] })).text, EMPTY_RESULT_TEXT);
    assert.equal(
      genericToolResult(contentOfValue({ content: ["x"], extra: 1 })).text,
      '{\n  "content": [\n    "x"\n  ],\n  "extra": 1\n}',
      "a host tool's object with a content key is JSON",
    );
  });

  it("render every failure as an isError text that says what happened and what to do next", () => {
    const failures: [DirectFailure, RegExp][] = [
      [
        { kind: "unknown_tool", tool: "github_list_issue", available: ["github_list_issues", "slack_post"] },
        /no tool named "github_list_issue".*Did you mean "github_list_issues"\?/,
      ],
      [{ kind: "not_loaded", tool: "stripe_refund" }, /not loaded yet.*tool_find\(\{ "names": \["stripe_refund"\] \}\) first/],
      [
        { kind: "invalid_arguments", tool: "gh_create", problems: [{ path: "/title", schemaPath: "#/properties/title/type", message: "must be string" }] },
        /do not match its input schema, so nothing was sent: \/title must be string \[schema #\/properties\/title\/type\]\. Fix the arguments/,
      ],
      [
        { kind: "denied", tool: "db_drop", reason: "dropping is done by hand" },
        /denied by the approval policy \(dropping is done by hand\), so nothing was sent\. Do not retry/,
      ],
      [{ kind: "rejected", tool: "db_insert", reason: "wrong table" }, /A human rejected the call to "db_insert": wrong table\. Nothing was sent/],
      [
        { kind: "approval_expired", tool: "db_insert", waitedMs: 86_400_000 },
        /waited 1d for an approval .* expired\. Nothing was sent\. If it is still needed, call it again/,
      ],
      [{ kind: "timeout", tool: "slow", afterMs: 300_000 }, /did not answer within 5m\. It was sent, so it may have taken effect: check before/],
      [{ kind: "rate_limited", tool: "api", retryAfterMs: 30_000 }, /rate limit; nothing was sent\. Wait 30s before calling it again/],
      [
        { kind: "parked", tool: "gh_list", waitingFor: "a renewed GITHUB credential" },
        /not sent: it is waiting for a renewed GITHUB credential, which a human must provide/,
      ],
      [{ kind: "outcome_unknown", tool: "pay" }, /interrupted, and this tool is never sent twice, so whether it took effect is unknown\. Check its effect/],
      [{ kind: "tool_error", tool: "gh", text: "Not Found" }, /^"gh" reported an error:\nNot Found$/],
      [{ kind: "call_id_reused", tool: "a", toolCallId: "toolu_1", recordedTool: "b" }, /already used in this session for a call of "b"/],
      [{ kind: "failed", tool: "http_fetch", code: "refused", message: "host not allowed" }, /failed \(refused\): host not allowed/],
    ];
    for (const [failure, text] of failures) {
      const content = failureContent(failure);
      assert.equal(content.isError, true);
      assert.match(genericToolResult(content).text, text, failure.kind);
      assert.equal(anthropicToolResult("t", content).is_error, true);
    }
  });

  it("map the journal's failures to those kinds, keeping the schema paths of invalid arguments", () => {
    const invalid = directFailureOf("gh_create", {
      code: "invalid_arguments",
      message: "Invalid arguments",
      details: [{ path: "/title", schemaPath: "#/properties/title/type", message: "must be string" }],
    });
    assert.deepEqual(invalid, {
      kind: "invalid_arguments",
      tool: "gh_create",
      problems: [{ path: "/title", schemaPath: "#/properties/title/type", message: "must be string" }],
    });
    assert.equal(directFailureOf("x", { code: "outcomeUnknown", message: "m" }).kind, "outcome_unknown");
    assert.equal(directFailureOf("x", { code: "approval_rejected", message: "no" }).kind, "rejected");
    assert.deepEqual(directFailureOf("x", { code: "rate_limited", message: "m", details: { retryAfterMs: 5000 } }), {
      kind: "rate_limited",
      tool: "x",
      retryAfterMs: 5000,
    });
    assert.deepEqual(directFailureOf("x", { code: "network_error", message: "no DNS" }), {
      kind: "failed",
      tool: "x",
      code: "network_error",
      message: "no DNS",
    });
  });
});
