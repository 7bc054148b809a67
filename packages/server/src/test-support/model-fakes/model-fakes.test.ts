import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type ModelApi, type ModelFake, readToolResults, type ScriptedTurn, startModelFake, type ToolResultSeen } from "./index.js";

/**
 * The fakes as their users meet them: an agent-style tool loop through each official client
 * (`@anthropic-ai/sdk`, `openai`) pointed at the fake by `baseURL`, then one failure suite run
 * against every API — a failure must reach the test at once, never hang nor be retried.
 */

const opened: ModelFake[] = [];
async function fake(api: ModelApi, turns: ScriptedTurn[]): Promise<ModelFake> {
  const started = await startModelFake(api, turns);
  opened.push(started);
  return started;
}
after(() => Promise.all(opened.map((f) => f.close())));

const ADD_SCHEMA = { type: "object" as const, properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };
const QUESTION = "What is 1 + 2?";

describe("model fakes: a tool loop through the official client", () => {
  it("anthropic: tool_use, the tool results seen by the next turn, then end_turn", async () => {
    let seen: ToolResultSeen[] = [];
    const f = await fake("anthropic", [
      {
        text: "Adding.",
        toolCalls: [
          { name: "add", input: { a: 1, b: 2 } },
          { name: "add", input: { a: "x" }, id: "toolu_given" },
        ],
      },
      (request) => {
        seen = request.toolResults;
        return { text: "1 + 2 = 3" };
      },
    ]);
    const client = new Anthropic({ apiKey: "test", baseURL: f.baseUrl, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: QUESTION }];
    const tools: Anthropic.Tool[] = [{ name: "add", description: "Adds two numbers.", input_schema: ADD_SCHEMA }];
    const ask = () => client.messages.create({ model: "claude-fake", max_tokens: 1024, tools, messages });

    const first = await ask();
    assert.equal(first.stop_reason, "tool_use");
    assert.equal(first.content[0]?.type === "text" && first.content[0].text, "Adding.");
    const calls = first.content.filter((block) => block.type === "tool_use");
    assert.deepEqual(
      calls.map(({ id, name, input }) => ({ id, name, input })),
      [
        { id: "toolu_fake_1_1", name: "add", input: { a: 1, b: 2 } },
        { id: "toolu_given", name: "add", input: { a: "x" } },
      ],
    );
    messages.push(
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_fake_1_1", content: "3" },
          { type: "tool_result", tool_use_id: "toolu_given", content: [{ type: "text", text: "b is missing" }], is_error: true },
        ],
      },
    );
    const second = await ask();
    assert.equal(second.stop_reason, "end_turn");
    assert.deepEqual(second.content, [{ type: "text", text: "1 + 2 = 3" }]);
    assert.deepEqual(seen, [
      { callId: "toolu_fake_1_1", content: "3" },
      { callId: "toolu_given", content: "b is missing", isError: true },
    ]);
    await f.done;
    assert.deepEqual(f.errors, []);
    assert.equal(f.requests.length, 2);
    assert.deepEqual(readToolResults("anthropic", f.requests[1]!.body), seen);
    assert.ok(f.requests[0]!.headers["anthropic-version"], "the client sends the API version it speaks");
  });

  it("openai-responses: function_call, its output seen by the next turn, then output_text", async () => {
    let seen: ToolResultSeen[] = [];
    const f = await fake("openai-responses", [
      { toolCalls: [{ name: "add", input: { a: 1, b: 2 }, id: "call_given" }] },
      (request) => {
        seen = request.toolResults;
        return { text: "1 + 2 = 3" };
      },
    ]);
    const client = new OpenAI({ apiKey: "test", baseURL: `${f.baseUrl}/v1`, maxRetries: 0 });
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: QUESTION }];
    const tools: OpenAI.Responses.Tool[] = [{ type: "function", name: "add", parameters: ADD_SCHEMA, strict: true }];
    const ask = () => client.responses.create({ model: "gpt-fake", input, tools });

    const first = await ask();
    assert.equal(first.output_text, "");
    const call = first.output.find((item) => item.type === "function_call");
    assert.ok(call?.type === "function_call");
    assert.deepEqual([call.call_id, call.name, JSON.parse(call.arguments)], ["call_given", "add", { a: 1, b: 2 }]);
    input.push(call, { type: "function_call_output", call_id: call.call_id, output: "3" });
    const second = await ask();
    assert.equal(second.output_text, "1 + 2 = 3");
    assert.equal(second.status, "completed");
    assert.deepEqual(seen, [{ callId: "call_given", content: "3" }]);
    await f.done;
    assert.deepEqual(f.errors, []);
  });

  it("openai-responses: a client tool_search_call, then a namespaced function_call; other APIs refuse both", async () => {
    const f = await fake("openai-responses", [
      { toolSearches: [{ input: { names: ["add"] } }], toolCalls: [{ name: "add", namespace: "math", input: { a: 1, b: 2 } }] },
    ]);
    const client = new OpenAI({ apiKey: "test", baseURL: `${f.baseUrl}/v1`, maxRetries: 0 });
    const response = await client.responses.create({ model: "gpt-fake", input: QUESTION });
    const [search, call] = response.output;
    assert.ok(search?.type === "tool_search_call" && call?.type === "function_call");
    assert.deepEqual([search.call_id, search.execution, search.arguments], ["call_fake_1_1", "client", { names: ["add"] }]);
    assert.deepEqual([call.call_id, call.namespace, call.name], ["call_fake_1_2", "math", "add"]);
    await f.done;
    for (const api of ["anthropic", "openai-chat"] as const) {
      const other = await fake(api, [{ toolCalls: [{ name: "add", namespace: "math", input: {} }] }]);
      await assert.rejects(ask(api, other), apiError(500, /has no namespaces: the call of \\?"add\\?" has one/));
      await assert.rejects(other.done);
    }
  });

  it("openai-chat: tool_calls, the tool message seen by the next turn, then stop", async () => {
    let seen: ToolResultSeen[] = [];
    const f = await fake("openai-chat", [
      { toolCalls: [{ name: "add", input: { a: 1, b: 2 } }] },
      (request) => {
        seen = request.toolResults;
        return { text: "1 + 2 = 3" };
      },
    ]);
    const client = new OpenAI({ apiKey: "test", baseURL: `${f.baseUrl}/v1`, maxRetries: 0 });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: QUESTION }];
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: "function", function: { name: "add", parameters: ADD_SCHEMA } }];
    const ask = () => client.chat.completions.create({ model: "gpt-fake", messages, tools });

    const first = await ask();
    const choice = first.choices[0];
    assert.equal(choice?.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    const call = choice.message.tool_calls?.[0];
    assert.ok(call?.type === "function");
    assert.deepEqual([call.id, call.function.name, JSON.parse(call.function.arguments)], ["call_fake_1_1", "add", { a: 1, b: 2 }]);
    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: [{ type: "text", text: "3" }] });
    const second = await ask();
    assert.equal(second.choices[0]?.finish_reason, "stop");
    assert.equal(second.choices[0].message.content, "1 + 2 = 3");
    assert.equal(second.choices[0].message.tool_calls, undefined);
    assert.deepEqual(seen, [{ callId: "call_fake_1_1", content: "3" }]);
    await f.done;
    assert.deepEqual(f.errors, []);
  });
});

/** Where each API lives, as the official clients build the URL. */
const ROUTES: Record<ModelApi, string> = { anthropic: "/v1/messages", "openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions" };

interface AskOptions {
  stream?: boolean;
  /** The client's own retry budget; the fake's `x-should-retry: false` must win over it. */
  maxRetries?: number;
  /** Overrides the right baseURL, to show what a wrong one does. */
  baseURL?: string;
}

/** One model call through the official client of `api`, as an agent loop makes it. */
function ask(api: ModelApi, f: ModelFake, { stream = false, maxRetries = 0, baseURL }: AskOptions = {}): Promise<unknown> {
  const messages = [{ role: "user" as const, content: QUESTION }];
  if (api === "anthropic") {
    const client = new Anthropic({ apiKey: "test", baseURL: baseURL ?? f.baseUrl, maxRetries });
    return client.messages.create({ model: "claude-fake", max_tokens: 1024, messages, stream });
  }
  const client = new OpenAI({ apiKey: "test", baseURL: baseURL ?? `${f.baseUrl}/v1`, maxRetries });
  if (api === "openai-responses") return client.responses.create({ model: "gpt-fake", input: QUESTION, stream });
  return client.chat.completions.create({ model: "gpt-fake", messages, stream });
}

/** The official clients' error, by shape: the two SDKs have separate `APIError` classes. */
function apiError(status: number, pattern: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof Anthropic.APIError || error instanceof OpenAI.APIError, `expected an API error, got ${String(error)}`);
    assert.equal(error.status, status);
    assert.match(error.message, pattern);
    return true;
  };
}

/** The message of an error body in `api`'s own shape. */
function errorBodyMessage(api: ModelApi, body: unknown): unknown {
  if (api === "anthropic") {
    const { type, error } = body as { type: string; error: { type: string; message: string } };
    assert.equal(type, "error");
    return error.message;
  }
  return (body as { error: { message: string } }).error.message;
}

async function post(api: ModelApi, f: ModelFake, text: string): Promise<Response> {
  return fetch(f.baseUrl + ROUTES[api], { method: "POST", headers: { "content-type": "application/json" }, body: text });
}

for (const api of Object.keys(ROUTES) as ModelApi[]) {
  describe(`model fakes (${api}): failures are clear at once`, () => {
    it("a request after the script ran out is answered 500 and not retried, even by a client that retries", async () => {
      const f = await fake(api, [{ text: "the only turn" }]);
      await ask(api, f);
      await f.done;
      await assert.rejects(ask(api, f, { maxRetries: 2 }), apiError(500, /script ran out: all 1 turns are played and request #2/));
      assert.equal(f.requests.length, 2, "no retry reached the fake");
      assert.deepEqual(
        f.errors.map((e) => [e.status, e.request?.seq]),
        [[500, 2]],
      );
    });

    it("a body that is not JSON is answered 400 in the API's own error shape, and rejects done", async () => {
      const f = await fake(api, [{ text: "never played" }]);
      const response = await post(api, f, "{ not json");
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("x-should-retry"), "false");
      assert.match(String(errorBodyMessage(api, await response.json())), /not a JSON object: "\{ not json"/);
      await assert.rejects(f.done, /model fake answered 400: the request body is not a JSON object/);
      assert.equal(f.requests.length, 0);
      assert.equal(f.errors.length, 1);
    });

    it("a body without the API's required fields is answered 400 naming the field, and consumes no turn", async () => {
      const f = await fake(api, [{ text: "still playable" }]);
      const response = await post(api, f, JSON.stringify({ messages: [] }));
      assert.equal(response.status, 400);
      assert.match(String(errorBodyMessage(api, await response.json())), /request #1 is malformed: `model`: expected a string, got nothing/);
      assert.equal(f.requests.length, 1, "a JSON body is recorded even when refused");
      await assert.rejects(f.done);
      await ask(api, f);
    });

    it("streaming is refused with a clear error", async () => {
      const f = await fake(api, [{ text: "never played" }]);
      await assert.rejects(ask(api, f, { stream: true }), apiError(400, /`stream: true` is not supported by the model fake/));
    });

    it("a wrong baseURL is answered 404 saying which baseURL the client needs", async () => {
      const f = await fake(api, [{ text: "never played" }]);
      const wrong = api === "anthropic" ? `${f.baseUrl}/v1` : f.baseUrl;
      await assert.rejects(ask(api, f, { baseURL: wrong }), apiError(404, new RegExp(`answers only POST ${ROUTES[api]}, not POST .*baseURL`)));
    });

    it("a turn function that throws fails the call and rejects done with its error", async () => {
      const boom = new Error("expected a tool result");
      const f = await fake(api, [
        () => {
          throw boom;
        },
      ]);
      await assert.rejects(ask(api, f), apiError(500, /turn 1 of the script threw on request #1: expected a tool result/));
      await assert.rejects(f.done, (error: Error) => error.cause === boom);
      assert.equal(f.errors[0]?.cause, boom);
    });

    it("closing with turns unplayed rejects done instead of leaving it pending", async () => {
      const f = await fake(api, [{ text: "one" }, { text: "two" }]);
      await ask(api, f);
      await f.close();
      await assert.rejects(f.done, /closed after 1 of 2 turns/);
    });
  });
}
