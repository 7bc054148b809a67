/**
 * Seed 001's OpenAI Chat Completions tab, as the seed writes it (between the marks): one turn of
 * the loop, which the harness around it repeats until the model answers without tool calls.
 * Run by packages/server/src/agent/seed-001.test.ts.
 */
import OpenAI from "openai";
import { Tapedeck as Rewind } from "@tapedeck/sdk";
import { conversation, instructionsFor, question, user } from "./harness.ts";

const rewind = new Rewind();
const toolset = await rewind.toolsets.create({ http: { allow: ["api.github.com"] } });
const agentTools = rewind.namespace(user.id).agentTools({
  toolset: toolset.id,
  labels: { agent: "repo-analyst", conversation: conversation.id },
});
const openai = new OpenAI();
const model = process.env.OPENAI_MODEL ?? "gpt-5";
const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "system", content: instructionsFor(toolset) },
  { role: "user", content: question },
];

for (;;) {
  // ── seed 001, OpenAI Chat Completions tab ──
  const completion = await openai.chat.completions.create({
    model,
    messages,
    tools: agentTools.openai.tools,
  });
  const message = completion.choices[0].message;
  messages.push(message);
  for (const call of message.tool_calls ?? []) {
    messages.push(await agentTools.openai.handle(call)); // { role: "tool", tool_call_id, content }
  }
  // ── end of the seed's code ──
  if (!message.tool_calls?.length) {
    console.log(message.content);
    break;
  }
}
