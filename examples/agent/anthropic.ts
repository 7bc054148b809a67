/**
 * A model answering one question with Tapedeck's agent tools, over the Anthropic Messages API.
 *
 *   ANTHROPIC_API_KEY=… TAPEDECK_API_KEY=tdk_… npx tsx examples/agent/anthropic.ts "Which of nodejs/node's open issues are oldest?"
 *
 * Environment: TAPEDECK_URL (default http://127.0.0.1:7700, a `tapedeck serve`), TAPEDECK_API_KEY
 * (what `tapedeck serve` printed, or `tapedeck keys create`), TAPEDECK_USER (the end user the runs
 * belong to, default "example-user"), TAPEDECK_HTTP_ALLOW (hosts scripts may fetch, comma
 * separated, default api.github.com), ANTHROPIC_MODEL. The Anthropic client reads
 * ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself.
 */
import Anthropic from "@anthropic-ai/sdk";
import { agentSetup } from "./setup.ts";

const question = process.argv.slice(2).join(" ") || "How many stars does nodejs/node have?";
const { agentTools, system } = await agentSetup("anthropic-example");
const anthropic = new Anthropic({ maxRetries: 0 });
const messages: Anthropic.Messages.MessageParam[] = [{ role: "user", content: question }];

for (;;) {
  const response = await anthropic.messages.create({
    model: process.env.ANTHROPIC_MODEL ?? "claude-opus-4-5",
    max_tokens: 16_000,
    system,
    tools: agentTools.anthropic.tools,
    messages,
  });
  messages.push({ role: "assistant", content: response.content });
  if (response.stop_reason !== "tool_use") {
    for (const block of response.content) if (block.type === "text") console.log(block.text);
    break;
  }
  const calls = response.content.filter((block) => block.type === "tool_use");
  const results = await Promise.all(calls.map((call) => agentTools.anthropic.handle(call)));
  messages.push({ role: "user", content: results });
}
