/**
 * A model answering one question with Tapedeck's agent tools, over the OpenAI Responses API (or,
 * with `--chat`, Chat Completions).
 *
 *   OPENAI_API_KEY=… TAPEDECK_API_KEY=tdk_… npx tsx examples/agent/openai.ts "Which of nodejs/node's open issues are oldest?"
 *
 * Environment: as examples/agent/anthropic.ts, with OPENAI_MODEL; the OpenAI client reads
 * OPENAI_API_KEY and OPENAI_BASE_URL itself.
 */
import OpenAI from "openai";
import { agentSetup } from "./setup.ts";

const chat = process.argv.includes("--chat");
const question =
  process.argv
    .slice(2)
    .filter((arg) => arg !== "--chat")
    .join(" ") || "How many stars does nodejs/node have?";
const { agentTools, system } = await agentSetup(chat ? "openai-chat-example" : "openai-example");
const openai = new OpenAI({ maxRetries: 0 });
const model = process.env.OPENAI_MODEL ?? "gpt-5";

if (chat) {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: system },
    { role: "user", content: question },
  ];
  for (;;) {
    const completion = await openai.chat.completions.create({ model, messages, tools: agentTools.openai.tools });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      console.log(message.content);
      break;
    }
    for (const call of message.tool_calls) if (call.type === "function") messages.push(await agentTools.openai.handle(call));
  }
} else {
  let input: OpenAI.Responses.ResponseInput = [{ role: "user", content: question }];
  let previous: string | undefined;
  for (;;) {
    const response = await openai.responses.create({
      model,
      instructions: system,
      tools: agentTools.openai.responses.tools,
      input,
      ...(previous ? { previous_response_id: previous } : {}),
    });
    const calls = response.output.filter((item) => item.type === "function_call");
    if (calls.length === 0) {
      console.log(response.output_text);
      break;
    }
    input = await Promise.all(calls.map((call) => agentTools.openai.responses.handle(call)));
    previous = response.id;
  }
}
