/**
 * Seed 001's Anthropic tab, as the seed writes it: between the two marks below the code is the
 * seed's, character for character (only the SDK's import names Tapedeck's package). Run by
 * packages/server/src/agent/seed-001.test.ts against `tapedeck serve` and a fake of the API.
 */
// ── seed 001, Anthropic tab ──
import Anthropic from "@anthropic-ai/sdk";
import { Tapedeck as Rewind } from "@tapedeck/sdk";
// ── (the harness around it) ──
import { conversation, question, user } from "./harness.ts";
// ── seed 001, Anthropic tab ──

const anthropic = new Anthropic();
const rewind = new Rewind();

const toolset = await rewind.toolsets.create({ http: { allow: ["api.github.com"] } });
const agentTools = rewind.namespace(user.id).agentTools({
  toolset: toolset.id,
  labels: { agent: "repo-analyst", conversation: conversation.id },
});

const system = [
  "You answer questions about GitHub repositories.",
  "Solve each task by writing one TypeScript script and running it with run_script: the script",
  "makes every call the task needs, in loops and in parallel, and returns only the answer.",
  "If a run fails, read the error, fix the script and call retry_run: calls already made are reused.",
  "",
  "What scripts can use:",
  toolset.declarations.prompt,
].join("\n");

const messages: Anthropic.Beta.BetaMessageParam[] = [{ role: "user", content: question }];

for (;;) {
  const response = await anthropic.beta.messages.create({
    model: "claude-opus-5-5",
    max_tokens: 16000,
    output_config: { effort: "high" },
    betas: ["server-side-fallback-2026-07-01"],
    fallbacks: "default",
    system,
    tools: agentTools.anthropic.tools,
    messages,
  });
  messages.push({ role: "assistant", content: response.content });

  if (response.stop_reason === "refusal") break;
  if (response.stop_reason !== "tool_use") {
    for (const block of response.content) if (block.type === "text") console.log(block.text);
    break;
  }

  const calls = response.content.filter((block) => block.type === "tool_use");
  const results = await Promise.all(calls.map((call) => agentTools.anthropic.handle(call)));
  messages.push({ role: "user", content: results });
}
// ── end of the seed's code ──
