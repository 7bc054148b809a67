/**
 * Seed 001's OpenAI Responses tab, as the seed writes it (between the marks), with the agent
 * tools made as the seed's first sample makes them. Run by packages/server/src/agent/seed-001.test.ts.
 */
// ── seed 001, OpenAI Responses tab ──
import OpenAI from "openai";
// ── (the harness around it) ──
import { Tapedeck as Rewind } from "@tapedeck/sdk";
import { conversation, instructionsFor, question, user } from "./harness.ts";

const rewind = new Rewind();
const toolset = await rewind.toolsets.create({ http: { allow: ["api.github.com"] } });
const instructions = instructionsFor(toolset);
// ── seed 001, the agent tools ──
const agentTools = rewind.namespace(user.id).agentTools({
  toolset: toolset.id,
  labels: { agent: "repo-analyst", conversation: conversation.id },
});
// ── seed 001, OpenAI Responses tab ──

const openai = new OpenAI();
let input: OpenAI.Responses.ResponseInput = [{ role: "user", content: question }];
let previous: string | undefined;

for (;;) {
  const response = await openai.responses.create({
    model: process.env.OPENAI_MODEL ?? "gpt-5",
    instructions,
    tools: agentTools.openai.responses.tools,
    input,
    previous_response_id: previous,
  });

  const calls = response.output.filter((item) => item.type === "function_call");
  if (calls.length === 0) {
    console.log(response.output_text);
    break;
  }
  input = await Promise.all(calls.map((call) => agentTools.openai.responses.handle(call)));
  previous = response.id;
}
// ── end of the seed's code ──
