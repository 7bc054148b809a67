/**
 * Seed 001's "Any other API" tab, as the seed writes it (between the marks), and its
 * `rewind.approvals.pending(result.run)`: one tool call given on the command line
 * (`<name> <input JSON> <tool call id>`), answered as JSON on stdout. The harness's toolset has a
 * tool that needs approval, so a run can wait for one. Run by packages/server/src/agent/seed-001.test.ts.
 */
import { Tapedeck as Rewind, type AgentToolDefinition } from "@tapedeck/sdk";
import { conversation, user } from "./harness.ts";

const rewind = new Rewind();
const toolset = await rewind.toolsets.create({
  hostTools: {
    shop: {
      refund: { description: "Refunds an order in full.", inputSchema: { type: "object", properties: { order: { type: "string" } }, required: ["order"] } },
    },
  },
  policies: { "shop.refund": { approval: true } },
});
const agentTools = rewind.namespace(user.id).agentTools({ toolset: toolset.id, labels: { agent: "support", conversation: conversation.id } });
const toYourFormat = (d: AgentToolDefinition) => ({ name: d.name, description: d.description, parameters: d.inputSchema });
const [name = "", inputJson = "{}", toolCallId = ""] = process.argv.slice(2);
const input: unknown = JSON.parse(inputJson);

// ── seed 001, "Any other API" tab ──
// Definitions: name, description, inputSchema (JSON Schema).
const tools = agentTools.definitions.map((d) => toYourFormat(d));

// A call: the tool's name, its input, and the model's tool call id.
const result = await agentTools.handle(name, input, { toolCallId });
// result.content: text for the model; result.isError: the model should look at it
// ── end of the seed's code; then "What the model gets back" ──
const pending = await rewind.approvals.pending(result.run);

console.log(JSON.stringify({ tools: tools.map((t) => t.name), content: result.content, isError: result.isError, run: result.run?.id, pending }));
