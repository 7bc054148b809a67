// The adapters' types are checked against the `openai` package's here. Those of
// `@anthropic-ai/sdk` cannot be imported into the SDK's program: they pull in Node's types (through
// undici-types), which the SDK compiles without (see anthropic-adapter.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type OpenAI from "openai";
import type { AgentToolHandler, AgentToolResult } from "./adapter-types.js";
import { agentToolAdapters } from "./adapters.js";
import { AGENT_TOOL_NAMES, agentToolDefinitions } from "./tool-definitions.js";

/** A handler that records its calls and answers from `answer`. */
function recording(answer: (name: string, input: unknown) => AgentToolResult = () => ({ content: "Run run_1 completed. Output (JSON):\n42", isError: false })) {
  const calls: { name: string; input: unknown; toolCallId: string }[] = [];
  const handle: AgentToolHandler = (name, input, { toolCallId }) => {
    calls.push({ name, input, toolCallId });
    return Promise.resolve(answer(name, input));
  };
  return { calls, handle };
}

const CODE = 'import { github } from "tapedeck:tools";\nexport default async () => (await github.list_issues({ repo: "acme/api" })).length;';

describe("agentToolAdapters: types", () => {
  it("gives values the openai package's types accept, and takes the values they give", async () => {
    const adapters = agentToolAdapters(agentToolDefinitions(), recording().handle);

    // OpenAI Responses.
    const responsesTools: OpenAI.Responses.FunctionTool[] = adapters.openai.responses.tools;
    const responsesParams: OpenAI.Responses.ResponseCreateParams["tools"] = adapters.openai.responses.tools;
    const call: OpenAI.Responses.ResponseFunctionToolCall = {
      type: "function_call",
      call_id: "call_01",
      name: "check_script",
      arguments: JSON.stringify({ code: CODE }),
    };
    const output: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = await adapters.openai.responses.handle(call);
    const input: OpenAI.Responses.ResponseInput = [output];

    // OpenAI Chat Completions.
    const chatTools: OpenAI.Chat.ChatCompletionTool[] = adapters.openai.tools;
    const chatParams: OpenAI.Chat.ChatCompletionCreateParams["tools"] = adapters.openai.tools;
    const toolCall: OpenAI.Chat.ChatCompletionMessageToolCall = {
      id: "call_02",
      type: "function",
      function: { name: "check_script", arguments: JSON.stringify({ code: CODE }) },
    };
    const message: OpenAI.Chat.ChatCompletionToolMessageParam = await adapters.openai.handle(toolCall);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [message];

    assert.equal(responsesTools.length, AGENT_TOOL_NAMES.length);
    assert.ok(responsesParams && input && chatTools && chatParams && messages);
  });
});

describe("agentToolAdapters: Anthropic", () => {
  it("lists the tools and answers a tool_use block with a tool_result block", async () => {
    const { calls, handle } = recording();
    const adapters = agentToolAdapters(agentToolDefinitions(), handle);
    const [first] = adapters.anthropic.tools;
    assert.equal(first?.name, "run_script");
    assert.equal(first?.input_schema.type, "object");
    assert.match(first?.description ?? "", /TypeScript/);
    const result = await adapters.anthropic.handle({ id: "toolu_01", name: "run_script", input: { code: CODE } });
    assert.deepEqual(result, { type: "tool_result", tool_use_id: "toolu_01", content: "Run run_1 completed. Output (JSON):\n42" });
    assert.deepEqual(calls, [{ name: "run_script", input: { code: CODE }, toolCallId: "toolu_01" }]);
  });

  it("marks the model's mistakes with is_error", async () => {
    const adapters = agentToolAdapters(
      agentToolDefinitions(),
      recording(() => ({ content: "The script was refused by the type checker", isError: true })).handle,
    );
    const result = await adapters.anthropic.handle({ id: "toolu_02", name: "run_script", input: { code: "x" } });
    assert.equal(result.is_error, true);
  });

  it("answers a tool it does not offer with the list of its tools, without calling the handler", async () => {
    const { calls, handle } = recording();
    const adapters = agentToolAdapters(agentToolDefinitions({ tools: ["run_script", "get_run"] }), handle);
    assert.deepEqual(await adapters.anthropic.handle({ id: "toolu_03", name: "cancel_run", input: { run_id: "run_1" } }), {
      type: "tool_result",
      tool_use_id: "toolu_03",
      content: 'There is no tool "cancel_run". The tools are: run_script, get_run.',
      is_error: true,
    });
    assert.deepEqual(calls, []);
  });

  it("lets a fault of the platform reject", async () => {
    const fault = new Error("unreachable");
    const adapters = agentToolAdapters(agentToolDefinitions(), () => Promise.reject(fault));
    await assert.rejects(adapters.anthropic.handle({ id: "toolu_04", name: "list_runs", input: {} }), fault);
  });
});

describe("agentToolAdapters: OpenAI Responses", () => {
  it("offers non-strict function tools and answers a function_call with a function_call_output", async () => {
    const { calls, handle } = recording();
    const adapters = agentToolAdapters(agentToolDefinitions(), handle);
    const [first] = adapters.openai.responses.tools;
    assert.equal(first?.type, "function");
    assert.equal(first?.strict, false);
    assert.equal(first?.parameters.type, "object");
    const output = await adapters.openai.responses.handle({ call_id: "call_01", name: "get_run", arguments: '{"run_id":"run_1","wait":30}' });
    assert.deepEqual(output, { type: "function_call_output", call_id: "call_01", output: "Run run_1 completed. Output (JSON):\n42" });
    assert.deepEqual(calls, [{ name: "get_run", input: { run_id: "run_1", wait: 30 }, toolCallId: "call_01" }]);
  });

  it("tells the model when its arguments are not JSON, without calling the handler", async () => {
    const { calls, handle } = recording();
    const adapters = agentToolAdapters(agentToolDefinitions(), handle);
    const output = await adapters.openai.responses.handle({
      call_id: "call_02",
      name: "run_script",
      arguments: '{"code": "export default async () => "done"}',
    });
    assert.match(output.output, /^Your arguments to run_script were not valid JSON \(.+\)\. Send them again as one JSON object/);
    assert.deepEqual(calls, []);
  });

  it("takes empty arguments as an empty object", async () => {
    const { calls, handle } = recording();
    await agentToolAdapters(agentToolDefinitions(), handle).openai.responses.handle({ call_id: "call_03", name: "list_runs", arguments: "" });
    assert.deepEqual(calls[0]?.input, {});
  });
});

describe("agentToolAdapters: OpenAI Chat Completions and any other API", () => {
  it("answers a tool call with a tool message", async () => {
    const { calls, handle } = recording();
    const adapters = agentToolAdapters(agentToolDefinitions(), handle);
    assert.deepEqual(adapters.openai.tools[0]?.function.name, "run_script");
    const message = await adapters.openai.handle({
      id: "call_04",
      type: "function",
      function: { name: "signal_run", arguments: '{"run_id":"run_1","name":"approved","payload":{"by":"ann"}}' },
    });
    assert.deepEqual(message, { role: "tool", tool_call_id: "call_04", content: "Run run_1 completed. Output (JSON):\n42" });
    assert.deepEqual(calls, [{ name: "signal_run", input: { run_id: "run_1", name: "approved", payload: { by: "ann" } }, toolCallId: "call_04" }]);
    const custom = await adapters.openai.handle({ id: "call_05", type: "custom", custom: { name: "shell", input: "ls" } });
    assert.match(custom.content, /^There is no tool "shell"\. The tools are: run_script, check_script/);
  });

  it("gives the definitions and a handle that checks the name", async () => {
    const { calls, handle } = recording();
    const definitions = agentToolDefinitions();
    const adapters = agentToolAdapters(definitions, handle);
    assert.equal(adapters.definitions, definitions);
    assert.deepEqual(await adapters.handle("cancel_run", { run_id: "run_1" }, { toolCallId: "t1" }), {
      content: "Run run_1 completed. Output (JSON):\n42",
      isError: false,
    });
    assert.equal((await adapters.handle("rm -rf", {}, { toolCallId: "t2" })).isError, true);
    assert.equal(calls.length, 1);
  });
});
