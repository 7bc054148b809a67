/**
 * The agent tools as the model sees them (seed 001, and `save_tool`): name, a description written for the
 * model (what the tool does, when to use it, what comes back), the JSON Schema of its input, and
 * the TypeScript type of that input. The schemas and the types say the same thing; `tool-input.ts`
 * checks inputs against the schemas, so the three cannot drift apart.
 */
import { AGENT_TOOL_NAMES, RunStatus, type AgentToolName, type JsonObject, type JsonValue } from "@tapedeck/protocol";

/** The agent tools, in the order they are offered (defined once, in the protocol: the engine protects their names). */
export { AGENT_TOOL_NAMES, type AgentToolName };

export interface RunScriptInput {
  readonly code: string;
  readonly input?: JsonValue;
  /** Seconds. */
  readonly wait?: number;
}
export interface CheckScriptInput {
  readonly code: string;
}
export interface TestScriptInput {
  readonly code: string;
  /** A scenario document (see `test_script`'s description); `from_run` replays a run's recorded calls. */
  readonly scenario: JsonObject;
}
export interface GetRunInput {
  readonly run_id: string;
  /** A journal entry's index: that entry in full. */
  readonly entry?: number;
  /** Characters into the output's JSON text: the page that starts there. */
  readonly offset?: number;
  /** Seconds. */
  readonly wait?: number;
}
export interface ListRunsInput {
  readonly status?: RunStatus;
}
export interface SignalRunInput {
  readonly run_id: string;
  readonly name: string;
  readonly payload?: JsonValue;
}
export interface CancelRunInput {
  readonly run_id: string;
}
export interface RetryRunInput {
  readonly run_id: string;
  readonly code: string;
}
export interface SearchToolsInput {
  readonly query: string;
}
export interface SaveWorkflowInput {
  readonly name: string;
  readonly description: string;
  readonly code: string;
  /** JSON Schema of the workflow's input. */
  readonly input: JsonObject;
  /** JSON Schema of the workflow's output. */
  readonly output: JsonObject;
  /** Each signal the workflow waits for, with the JSON Schema of its payload. */
  readonly signals?: { readonly [name: string]: JsonObject };
}

export interface SaveToolInput {
  readonly group: string;
  readonly name: string;
  readonly description: string;
  readonly code: string;
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  /** Grants: `http` [{ host, pathPrefix, methods }], `secrets`, `workspace` "ro" | "rw", `tools`. */
  readonly capabilities?: JsonObject;
  readonly limits?: JsonObject;
  /** Test cases run in the sandbox before it is saved. */
  readonly tests?: readonly JsonObject[];
}

/** The input of each tool, by name. */
export interface AgentToolInputs {
  run_script: RunScriptInput;
  check_script: CheckScriptInput;
  test_script: TestScriptInput;
  get_run: GetRunInput;
  list_runs: ListRunsInput;
  signal_run: SignalRunInput;
  cancel_run: CancelRunInput;
  retry_run: RetryRunInput;
  search_tools: SearchToolsInput;
  save_workflow: SaveWorkflowInput;
  save_tool: SaveToolInput;
}

/**
 * The JSON Schema of a tool's input. A type alias (not an interface) with mutable arrays, so it
 * is assignable to the model APIs' own schema types (`{ [key: string]: unknown }`, `string[]`).
 */
export type ToolInputSchema = {
  type: "object";
  properties: { [name: string]: JsonObject };
  required: string[];
  additionalProperties: false;
};

export interface AgentToolDefinition {
  readonly name: AgentToolName;
  /** For the model: what the tool does, when to use it, what comes back. */
  readonly description: string;
  readonly inputSchema: ToolInputSchema;
}

export interface AgentToolDefinitionOptions {
  /**
   * The toolset's declarations for the prompt (`Declarations.prompt`), added to `run_script`'s
   * description so the model knows what scripts can call. Default: none (put them in the system
   * prompt instead, as seed 001's examples do).
   */
  readonly declarations?: string;
  /** The tools to define (offered in `AGENT_TOOL_NAMES` order). Default: all ten. */
  readonly tools?: readonly AgentToolName[];
  /** How long `run_script`, `retry_run` and `cancel_run` wait for the run to end, seconds, as the descriptions say. Default 30. */
  readonly waitSeconds?: number;
  /** The longest `wait` the model may ask for, seconds, as the descriptions say. Default 120. */
  readonly maxWaitSeconds?: number;
}

/** Seed 001's defaults: `wait` "30s", `maxWait` "2m". */
export const DEFAULT_WAIT_SECONDS = 30;
export const DEFAULT_MAX_WAIT_SECONDS = 120;

/**
 * The definitions of the agent tools. Each call builds new objects, so a caller may change them.
 * Throws a `TypeError` for a name in `tools` that is not an agent tool (a bug of the caller).
 */
export function agentToolDefinitions(options: AgentToolDefinitionOptions = {}): AgentToolDefinition[] {
  const wanted = options.tools ?? AGENT_TOOL_NAMES;
  for (const name of wanted) {
    if (!(AGENT_TOOL_NAMES as readonly string[]).includes(name))
      throw new TypeError(`agentToolDefinitions: "${name}" is not an agent tool; they are ${AGENT_TOOL_NAMES.join(", ")}.`);
  }
  const wait = options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
  const maxWait = options.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
  const descriptions = toolDescriptions(wait, maxWait);
  const schemas = agentToolSchemas(wait, maxWait);
  return AGENT_TOOL_NAMES.filter((name) => wanted.includes(name)).map((name) => ({
    name,
    description: name === "run_script" && options.declarations ? `${descriptions[name]}\n\nWhat scripts can use:\n${options.declarations}` : descriptions[name],
    inputSchema: schemas[name],
  }));
}

function toolDescriptions(wait: number, maxWait: number): Record<AgentToolName, string> {
  const script =
    "Scripts are TypeScript run durably: every tool call is journaled, so a run survives restarts, can sleep or wait for a signal for days, and a retry reuses the calls already made.";
  const answers =
    `Waits up to ${wait} s for the run to end, then answers with the output (long outputs are cut, with the get_run call that reads the rest) and the last log lines; ` +
    "or the error with its line, code frame and the calls up to it; or what the run waits for; or, for a script that does not type-check, the errors (nothing runs).";
  return {
    run_script:
      `Run a TypeScript script that does the whole task. ${script} The script imports its tools from "tapedeck:tools" and default-exports an async function of \`input\` that returns JSON: ` +
      '`import { github } from "tapedeck:tools"; export default async (input) => { …; return answer; }`. ' +
      `Make every call the task needs in one script (loops, Promise.all) and return only what you need. ${answers}`,
    check_script:
      'Type-check a script against the tools without running it. Answers "ok" or the errors with their lines and code frames. run_script checks too: use this for a script you do not want to run yet.',
    test_script:
      "Run a script against mocks in virtual time: no real tool is called and sleeps cost nothing. Use it before running a script that writes, sends or waits. " +
      '`scenario`: { "tools": { "github.get_issue": { "result": {…} }, "github.search": [{ "result": [] }, { "error": { "code": "rate_limited", "message": "…" }, "delay": "30s" }] }, ' +
      '"signals": [{ "name": "approved", "at": "2h", "payload": {…} }], "approvals": [{ "tool": "github.merge", "decision": "approve" }], "from_run": "<run_id>" } ' +
      "(an object answers every call, an array one call each in order; from_run answers calls with what that run recorded). Answers with the output or error, each call with its virtual time, and the logs.",
    get_run:
      `Read a run: its status, output or error, what it waits for. \`wait\`: wait up to that many seconds (at most ${maxWait}) for it to end or to start waiting. ` +
      "`offset`: the page of a long output that starts there (a cut output gives the exact call). `entry`: one journal entry in full (a call's whole arguments or result).",
    list_runs: "List the runs of this conversation, newest first, with their status and what they wait for. Use it to find a run whose id you lost.",
    signal_run:
      "Send a signal to a run. A run waiting in signal(name) says so, with the name; `payload` is what signal() returns in the script. A signal sent before the run waits for it is kept.",
    cancel_run: `Cancel a run that has not ended: it stops, and calls in flight are abandoned. Use it for a run that is stuck, looping or no longer needed. Waits up to ${wait} s for it to stop and answers its final state.`,
    retry_run:
      "Fix a failed (or wrong) run: starts a new run of the corrected `code` that reuses the results of the calls the old run already made with the same tool and arguments, so they are not made again. " +
      `Keep the calls before the failure unchanged so they are reused. ${answers}`,
    search_tools:
      'Find tools by what they do. Answers the TypeScript declarations of the best matches, to import from "tapedeck:tools". Use it when no tool you were shown does what you need; query with words its name or description would use.',
    save_workflow:
      "Save a script as a workflow your later scripts can start: `workflows.<name>.start(input)` returns `{ id, result() }`, and `workflows.<name>.signal(id, signal, payload)` signals it. " +
      "`input` and `output` are the JSON Schemas of its input and output; `signals` maps each signal it waits for to the JSON Schema of its payload. The code is type-checked first. " +
      "Use it for a multi-step job you will run again, or one that runs in the background.",
    save_tool:
      "Save a tool your later scripts call as `<group>.<name>(input)`: TypeScript whose default export takes the input and returns the output, run in a fresh sandbox per call with no capability unless granted in `capabilities` " +
      '(`http`: [{ "host", "pathPrefix", "methods" }] gives it fetch; `secrets`: credential names for fetch(url, { credential }); `workspace`: "ro" | "rw"; `tools`: ["group.name"]). ' +
      'It is type-checked, then each of `tests` ({ "input", "output" or "error", "http": [{ "url", "status", "body" }], "tools": { "group.name": result } }) runs with those mocks; failures come back with what differed. Grants beyond what this agent may give need a human\'s approval.',
  };
}

/** The input schemas, new objects on every call. The waits only change descriptions: a longer wait is shortened, not refused. */
function agentToolSchemas(defaultWait: number, maxWait: number): Record<AgentToolName, ToolInputSchema> {
  const runId = (): JsonObject => ({ type: "string", minLength: 1, description: "The run's id, as a result gave it." });
  const code = (): JsonObject => ({
    type: "string",
    minLength: 1,
    description: 'The script: TypeScript that imports tools from "tapedeck:tools" and default-exports an async function of `input` returning JSON.',
  });
  const wait = (what: string, fallback: string): JsonObject => ({
    type: "number",
    minimum: 0,
    description: `Seconds to wait for ${what} (default ${fallback}, at most ${maxWait}).`,
  });
  const json = (description: string): JsonObject => ({ description });
  const schema = (description: string): JsonObject => ({ type: "object", description: `A JSON Schema of ${description}.` });
  return {
    run_script: object({ code: code(), input: json("Passed to the script's default export. Default null."), wait: wait("the run to end", `${defaultWait}`) }, [
      "code",
    ]),
    check_script: object({ code: code() }, ["code"]),
    test_script: object({ code: code(), scenario: { type: "object", description: "What the mocked tools answer, and when (see the tool's description)." } }, [
      "code",
      "scenario",
    ]),
    get_run: object(
      {
        run_id: runId(),
        entry: { type: "integer", minimum: 0, description: "The index of a journal entry to read in full." },
        offset: { type: "integer", minimum: 0, description: "Where to start reading the output, in characters of its JSON text." },
        wait: wait("the run to end or to start waiting", "0: answer at once"),
      },
      ["run_id"],
    ),
    list_runs: object({ status: { type: "string", enum: Object.values(RunStatus), description: "Only runs with this status." } }, []),
    signal_run: object(
      {
        run_id: runId(),
        name: { type: "string", minLength: 1, description: "The signal's name, as the script's signal(name) says." },
        payload: json("What signal() returns in the script. Default null."),
      },
      ["run_id", "name"],
    ),
    cancel_run: object({ run_id: runId() }, ["run_id"]),
    retry_run: object({ run_id: runId(), code: code() }, ["run_id", "code"]),
    search_tools: object({ query: { type: "string", minLength: 1, description: "Words describing what the tool does." } }, ["query"]),
    save_workflow: object(
      {
        name: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$", maxLength: 64, description: "An identifier: scripts call workflows.<name>.start(input)." },
        description: { type: "string", minLength: 1, description: "What the workflow does, for whoever starts it." },
        code: code(),
        input: schema("the input start(input) takes"),
        output: schema("the output result() resolves with"),
        signals: {
          type: "object",
          additionalProperties: { type: "object" },
          description: "Each signal the workflow waits for, mapped to a JSON Schema of its payload.",
        },
      },
      ["name", "description", "code", "input", "output"],
    ),
    save_tool: object(
      {
        group: {
          type: "string",
          pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
          maxLength: 64,
          description: "The group scripts import it from: a new one, or one of tools you saved (not a group the toolset has).",
        },
        name: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$", maxLength: 64, description: "Its name in the group." },
        description: { type: "string", minLength: 1, description: "What it does, for the model that will call it." },
        code: { type: "string", minLength: 1, description: "TypeScript: the default export takes the input and returns the output." },
        inputSchema: schema("its input (an object)"),
        outputSchema: schema("its output"),
        capabilities: { type: "object", description: "What it may reach (http, secrets, workspace, tools); nothing unless granted." },
        limits: { type: "object", description: "fuel, deadlineMs, memoryBytes, httpRequests, toolCalls (defaults are fine)." },
        tests: { type: "array", description: "Cases run before saving: { input, output | error, http, tools }." },
      },
      ["group", "name", "description", "code", "inputSchema"],
    ),
  };
}

function object(properties: { [name: string]: JsonObject }, required: string[]): ToolInputSchema {
  return { type: "object", properties, required, additionalProperties: false };
}
