// The Anthropic adapter's structural types, checked against @anthropic-ai/sdk's (Messages and
// beta): this file only compiles if they are assignable both ways the seed's loop uses them. The
// SDK cannot import those types itself (they bring Node's), so the check lives in its tests.
import { it } from "node:test";
import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import { agentToolAdapters } from "./adapters.js";
import { agentToolDefinitions } from "./tool-definitions.js";

async function check(): Promise<unknown[]> {
  const adapters = agentToolAdapters(agentToolDefinitions(), () => Promise.resolve({ content: "ok", isError: false }));
  const tools: Anthropic.Messages.Tool[] = adapters.anthropic.tools;
  const params: Anthropic.Messages.MessageCreateParams["tools"] = adapters.anthropic.tools;
  const betaTools: Anthropic.Beta.BetaTool[] = adapters.anthropic.tools;
  const betaParams: Anthropic.Beta.Messages.MessageCreateParams["tools"] = adapters.anthropic.tools;
  const block: Anthropic.Messages.ToolUseBlock = { type: "tool_use", id: "toolu_01", name: "check_script", input: { code: "x" }, caller: { type: "direct" } };
  const result: Anthropic.Messages.ToolResultBlockParam = await adapters.anthropic.handle(block);
  const betaBlock: Anthropic.Beta.BetaToolUseBlock = { type: "tool_use", id: "toolu_02", name: "check_script", input: { code: "x" } };
  const betaResult: Anthropic.Beta.BetaToolResultBlockParam = await adapters.anthropic.handle(betaBlock);
  const userTurn: Anthropic.Messages.MessageParam = { role: "user", content: [result] };
  const betaTurn: Anthropic.Beta.BetaMessageParam = { role: "user", content: [betaResult] };
  // The seed's loop: filter the answer's content, handle every tool_use block.
  const content: Anthropic.Messages.ContentBlock[] = [block];
  const results = await Promise.all(content.filter((b) => b.type === "tool_use").map((b) => adapters.anthropic.handle(b)));
  const next: Anthropic.Messages.MessageParam = { role: "user", content: results };
  return [tools, params, betaTools, betaParams, userTurn, betaTurn, next];
}

void it("the Anthropic adapter's tools and results are the official SDK's types", async () => {
  const checked = await check();
  assert.equal(checked.length, 7);
});
