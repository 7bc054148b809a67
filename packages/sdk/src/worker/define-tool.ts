import type { HostToolSpec, JsonSchema, PolicySpec, ToolsetSpec } from "@tapedeck/protocol";
import type { ToolContext, ToolHandler, WorkerTools } from "./worker-types.js";

/**
 * A host tool written in one place: `defineTool({ group, name, description, inputSchema,
 * policy, execute })` is both the toolset's entry (what scripts and models see, and the policy
 * the engine applies) and the worker's handler (what runs when it is called), so the two cannot
 * drift apart. `toolsetSpec(tools)` makes the toolset's `hostTools` and `policies` from them,
 * `workerTools(tools)` the worker's `tools`.
 *
 * Invariants:
 * - A definition is checked when it is made: a name scripts cannot write, an empty description
 *   or an input schema that is not an object is a `TypeError` naming the field (the server
 *   would refuse the toolset later, far from the mistake).
 * - `group.name` is unique among the tools given: a repeat is a `TypeError`, never a silent
 *   overwrite; so is a tool the base toolset already has.
 */

export interface ToolDefinitionSpec<Args, Result> {
  /** The group scripts import: `shop` in `import { shop } from "tapedeck:tools"`. */
  readonly group: string;
  /** The tool's name in its group: `refund` in `shop.refund(…)`. */
  readonly name: string;
  /** What it does and when to use it, for the model that writes the script. */
  readonly description: string;
  /** JSON Schema of the arguments (an object); the engine validates every call against it before the worker gets it. */
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the result: it becomes the result's type in scripts. */
  readonly outputSchema?: JsonSchema;
  /** The tool's policy in the toolset: approval, timeouts, interruption, concurrency. */
  readonly policy?: PolicySpec;
  /** Runs the call (in the worker). Resolves with the result; throws a `ToolError` to fail with a code. */
  readonly execute: (args: Args, context: ToolContext) => Result | Promise<Result>;
}

/** A tool made by `defineTool`: its toolset entry and its handler. */
export interface DefinedTool {
  readonly group: string;
  readonly name: string;
  /** The entry of `hostTools[group][name]`. */
  readonly spec: HostToolSpec;
  readonly policy?: PolicySpec;
  /** The worker's handler. */
  readonly handler: ToolHandler;
}

/** The shape `tapedeck:tools` exports: an identifier for the group; tool names as MCP allows them. */
const GROUP = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Defines a host tool. `Args` is the type of the arguments its `inputSchema` describes (the
 * engine validated them already), e.g. `defineTool<{ order: string }>({ … })`.
 */
export function defineTool<Args = never, Result = unknown>(definition: ToolDefinitionSpec<Args, Result>): DefinedTool {
  const where = `defineTool(${JSON.stringify(`${String(definition.group)}.${String(definition.name)}`)})`;
  if (typeof definition.group !== "string" || !GROUP.test(definition.group) || definition.group === "__proto__")
    throw new TypeError(`${where}: group must be an identifier (letters, digits, _ or $, not starting with a digit), such as "shop".`);
  if (typeof definition.name !== "string" || !NAME.test(definition.name) || definition.name === "__proto__")
    throw new TypeError(`${where}: name must be 1 to 128 letters, digits, _ . or -, such as "refund".`);
  if (typeof definition.description !== "string" || definition.description.trim() === "")
    throw new TypeError(`${where}: description must say what the tool does, for the model that calls it.`);
  const input = definition.inputSchema;
  if (typeof input !== "object" || input === null || Array.isArray(input) || (input.type !== undefined && input.type !== "object"))
    throw new TypeError(`${where}: inputSchema must be a JSON Schema of an object, such as { type: "object", properties: { … } }.`);
  if (typeof definition.execute !== "function") throw new TypeError(`${where}: execute must be the function that runs the call.`);
  const execute = definition.execute;
  const spec: HostToolSpec = {
    description: definition.description,
    inputSchema: input,
    ...(definition.outputSchema === undefined ? {} : { outputSchema: definition.outputSchema }),
  };
  return {
    group: definition.group,
    name: definition.name,
    spec,
    ...(definition.policy === undefined ? {} : { policy: definition.policy }),
    handler: (args: never, context: ToolContext) => execute(args, context),
  };
}

/** `base` with `tools` added to its `hostTools`, and their policies to its `policies`. */
export function toolsetSpec(tools: readonly DefinedTool[], base: ToolsetSpec = {}): ToolsetSpec {
  const hostTools: Record<string, Record<string, HostToolSpec>> = Object.create(null) as Record<string, Record<string, HostToolSpec>>;
  for (const [group, entries] of Object.entries(base.hostTools ?? {})) hostTools[group] = { ...entries };
  const policies: Record<string, PolicySpec> = { ...base.policies };
  for (const tool of unique(tools, base)) {
    (hostTools[tool.group] ??= Object.create(null) as Record<string, HostToolSpec>)[tool.name] = tool.spec;
    if (tool.policy !== undefined) policies[`${tool.group}.${tool.name}`] = tool.policy;
  }
  // Plain objects in the spec (the maps above have no prototype, so no name can be inherited).
  const plain = Object.fromEntries(Object.entries(hostTools).map(([group, entries]) => [group, { ...entries }]));
  return { ...base, hostTools: plain, ...(Object.keys(policies).length > 0 ? { policies } : {}) };
}

/** The worker's `tools` for `tools`: `tapedeck.worker({ tools: workerTools([refund, price]) })`. */
export function workerTools(tools: readonly DefinedTool[]): WorkerTools {
  const byGroup = new Map<string, Record<string, ToolHandler>>();
  for (const tool of unique(tools)) {
    let group = byGroup.get(tool.group);
    if (group === undefined) byGroup.set(tool.group, (group = Object.create(null) as Record<string, ToolHandler>));
    group[tool.name] = tool.handler;
  }
  return Object.fromEntries(byGroup);
}

function unique(tools: readonly DefinedTool[], base: ToolsetSpec = {}): readonly DefinedTool[] {
  const seen = new Set<string>();
  for (const tool of tools) {
    const id = `${tool.group}.${tool.name}`;
    if (seen.has(id)) throw new TypeError(`${id} is defined twice: give each tool its own group.name.`);
    if (Object.hasOwn(base.hostTools?.[tool.group] ?? {}, tool.name)) throw new TypeError(`${id} is already a host tool of the base toolset spec.`);
    seen.add(id);
  }
  return tools;
}
