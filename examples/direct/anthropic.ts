/**
 * A harness that gives the model an MCP server's tools as its own tools (direct tool mode), over
 * the Anthropic Messages API. Every tool call is journaled in a Tapedeck session before it is
 * sent, with an idempotency key; reads go at once, writes wait for you: the harness asks at the
 * terminal, and the decision is journaled before the call is sent.
 *
 *   ANTHROPIC_API_KEY=… TAPEDECK_API_KEY=tdk_… npx tsx examples/direct/anthropic.ts "Remember that Ada Lovelace wrote the first program"
 *
 * The tools are the reference MCP memory server's (a knowledge graph in a file). Environment:
 * TAPEDECK_URL (default http://127.0.0.1:7700, a `tapedeck serve`), TAPEDECK_API_KEY (what
 * `tapedeck serve` printed: registering a stdio MCP server takes an operator's key),
 * TAPEDECK_USER (the end user, default "example-user"), TAPEDECK_SESSION (the conversation's
 * id: run again with the same one and the calls already made are answered from the journal),
 * MEMORY_FILE (default memory.jsonl in the system's temp folder), ANTHROPIC_MODEL. The Anthropic
 * client reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself.
 */
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import Anthropic from "@anthropic-ai/sdk";
import { Tapedeck } from "@tapedeck/sdk";

const question = process.argv.slice(2).join(" ") || "What do you remember?";
const apiKey = process.env.TAPEDECK_API_KEY;
if (!apiKey) throw new Error("Set TAPEDECK_API_KEY to the key `tapedeck serve` printed (or one from `tapedeck keys create`).");
const tapedeck = new Tapedeck({ baseUrl: process.env.TAPEDECK_URL ?? "http://127.0.0.1:7700", apiKey });

const memoryServer = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-memory/dist/index.js");
const toolset = await tapedeck.toolsets.create({
  mcpServers: {
    // `graph`, not `memory`: that is the built-in library's memory group.
    graph: { command: process.execPath, args: [memoryServer], env: { MEMORY_FILE_PATH: process.env.MEMORY_FILE ?? join(tmpdir(), "memory.jsonl") } },
  },
});

const tools = await tapedeck.namespace(process.env.TAPEDECK_USER ?? "example-user").directTools({
  toolset: toolset.id,
  session: process.env.TAPEDECK_SESSION ?? `conv-${Date.now()}`,
  labels: { agent: "direct-example" },
  // Reads (readOnlyHint) go at once; deleting asks whatever else is said; other writes ask (byRisk).
  approval: { ask: [{ tool: "graph.delete_*", summary: "Delete from memory: {/entityNames}" }], unmatched: "byRisk" },
});
for (const warning of tools.warnings) console.error(`warning: ${warning}`);

const terminal = createInterface({ input: process.stdin, output: process.stderr });
const anthropic = new Anthropic({ maxRetries: 0 });
const system = ["You keep a knowledge graph of what the user tells you, with the graph tools.", tools.note].filter(Boolean).join("\n\n");
const messages: Anthropic.Messages.MessageParam[] = [{ role: "user", content: question }];

for (;;) {
  const response = await anthropic.messages.create({
    model: process.env.ANTHROPIC_MODEL ?? "claude-opus-4-5",
    max_tokens: 4_000,
    system,
    tools: tools.anthropic.tools,
    messages,
  });
  messages.push({ role: "assistant", content: response.content });
  if (response.stop_reason !== "tool_use") {
    for (const block of response.content) if (block.type === "text") console.log(block.text);
    break;
  }
  const calls = response.content.filter((block) => block.type === "tool_use");
  // One step for each call, concurrently: the reads are answered, the writes wait for a human.
  const steps = await Promise.all(calls.map((call) => tools.call("anthropic", call.name, call.input, call.id)));
  for (const step of steps) {
    if (step.status !== "pending") continue;
    const answer = await terminal.question(`${step.approval.summary} (${step.approval.reason}). Approve? [y/N] `);
    if (/^y(es)?$/i.test(answer.trim())) await tools.approve(step.approval.seq);
    else await tools.reject(step.approval.seq, { reason: "the user said no" });
  }
  // Each call's result, recorded in the session: nothing is sent a second time.
  const results = await Promise.all(calls.map((call) => tools.anthropic.handle(call)));
  messages.push({ role: "user", content: results });
}
terminal.close();
