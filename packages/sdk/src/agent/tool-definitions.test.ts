import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AGENT_TOOL_NAMES, agentToolDefinitions, type AgentToolInputs, type AgentToolName } from "./tool-definitions.js";
import { parseToolInput } from "./tool-input.js";

/** Each input type's fields, true when required. The compiler checks this against the types; the test checks it against the schemas. */
type Fields<T> = { [K in keyof Required<T>]-?: object extends Pick<T, K> ? false : true };
const FIELDS: { [N in AgentToolName]: Fields<AgentToolInputs[N]> } = {
  run_script: { code: true, input: false, wait: false },
  check_script: { code: true },
  test_script: { code: true, scenario: true },
  get_run: { run_id: true, entry: false, offset: false, wait: false },
  list_runs: { status: false },
  signal_run: { run_id: true, name: true, payload: false },
  cancel_run: { run_id: true },
  retry_run: { run_id: true, code: true },
  search_tools: { query: true },
  save_workflow: { name: true, description: true, code: true, input: true, output: true, signals: false },
  save_tool: {
    group: true,
    name: true,
    description: true,
    code: true,
    inputSchema: true,
    outputSchema: false,
    capabilities: false,
    limits: false,
    tests: false,
  },
};

describe("agentToolDefinitions", () => {
  it("defines the agent tools (seed 001's ten and save_tool), with schemas that say what their input types say", () => {
    const definitions = agentToolDefinitions();
    assert.deepEqual(
      definitions.map((d) => d.name),
      [...AGENT_TOOL_NAMES],
    );
    for (const { name, inputSchema, description } of definitions) {
      const fields = FIELDS[name] as Record<string, boolean>;
      assert.deepEqual(Object.keys(inputSchema.properties).sort(), Object.keys(fields).sort(), name);
      assert.deepEqual(
        [...inputSchema.required].sort(),
        Object.keys(fields)
          .filter((key) => fields[key])
          .sort(),
        name,
      );
      assert.equal(inputSchema.additionalProperties, false);
      // Descriptions go into every request's prompt: tight.
      assert.ok(description.length > 80 && description.length < 1_100, `${name}: ${description.length} characters`);
      for (const [key, property] of Object.entries(inputSchema.properties)) assert.equal(typeof property["description"], "string", `${name}.${key}`);
    }
  });

  it("puts the declarations in run_script's description, and the waits in words", () => {
    const prompt = 'import { github } from "tapedeck:tools";\ngithub.get_issue({ repo, n }) → Issue · Get an issue.';
    const [run] = agentToolDefinitions({ declarations: prompt, tools: ["run_script"], waitSeconds: 20, maxWaitSeconds: 60 });
    assert.ok(run?.description.endsWith(`\n\nWhat scripts can use:\n${prompt}`));
    assert.match(run?.description ?? "", /TypeScript run durably/);
    assert.match(run?.description ?? "", /Waits up to 20 s/);
    assert.match(agentToolDefinitions({ maxWaitSeconds: 60 }).find((d) => d.name === "get_run")?.description ?? "", /at most 60/);
  });

  it("offers a subset in the usual order, builds new objects each time, and refuses a name that is not a tool", () => {
    assert.deepEqual(
      agentToolDefinitions({ tools: ["get_run", "run_script"] }).map((d) => d.name),
      ["run_script", "get_run"],
    );
    const a = agentToolDefinitions();
    a[0]?.inputSchema.required.push("changed");
    assert.deepEqual(agentToolDefinitions()[0]?.inputSchema.required, ["code"]);
    assert.throws(() => agentToolDefinitions({ tools: ["run_scripts" as AgentToolName] }), /"run_scripts" is not an agent tool/);
  });
});

describe("parseToolInput", () => {
  it("accepts an input that matches the schema, typed", () => {
    const parsed = parseToolInput("run_script", { code: "export default async () => 1;", input: { n: [1, 2] }, wait: 10 });
    assert.equal(parsed.ok, true);
    if (parsed.ok) assert.equal(parsed.input.wait, 10);
    assert.equal(parseToolInput("list_runs", {}).ok, true);
    assert.equal(
      parseToolInput("save_workflow", { name: "triage_issue", description: "d", code: "c", input: { type: "object" }, output: {}, signals: { approved: {} } })
        .ok,
      true,
    );
  });

  it("says what to fix, for the model", () => {
    assert.deepEqual(parseToolInput("run_script", { source: "x", wait: "30s" }), {
      ok: false,
      message:
        'The input of run_script is not valid: "code" is missing; "source" is not one of its fields; "wait" must be a number, not a string. run_script takes { code, input?, wait? }.',
    });
    const cases: [AgentToolName, unknown, RegExp][] = [
      ["get_run", { run_id: "run_1", offset: -1 }, /"offset" must be at least 0/],
      ["get_run", { run_id: "run_1", entry: 1.5 }, /"entry" must be an integer, not a fractional number/],
      ["get_run", { run_id: "" }, /"run_id" must not be empty/],
      ["list_runs", { status: "done" }, /"status" must be one of "queued", "running", "waiting", "completed", "failed", "cancelled"/],
      ["save_workflow", { name: "triage issue", description: "d", code: "c", input: {}, output: {} }, /"name" must match/],
      ["test_script", { code: "c", scenario: [] }, /"scenario" must be an object, not an array/],
      ["cancel_run", "run_1", /it must be a JSON object, not a string/],
      ["check_script", undefined, /it must be a JSON object, not nothing/],
    ];
    for (const [name, input, message] of cases) {
      const parsed = parseToolInput(name, input);
      assert.equal(parsed.ok, false, name);
      if (!parsed.ok) assert.match(parsed.message, message);
    }
  });
});
