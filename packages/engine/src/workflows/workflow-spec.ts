import type { JsonSchema, PinnedToolset, PinnedWorkflow } from "@tapedeck/protocol";
import { findLiteralSecret } from "../toolset/literal-secrets.js";
import { toolsetOf } from "../toolset/pin.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import type { ToolsetOwner } from "../store/toolset-store.js";

/**
 * What saving a workflow takes, how it is checked before its code is, and the derived toolset
 * that pins it. Saving never changes a toolset: it derives a new one (`base`: the toolset it
 * was saved on) with the base's tools and workflows plus this one, under a new content address.
 */

/** `Engine.saveWorkflow`'s options. */
export interface SaveWorkflowOptions {
  /** The toolset to save it on: its code is checked against this toolset's declarations, and the derived toolset keeps its tools. */
  readonly toolset: string;
  /** An identifier (`workflows.<name>` in scripts), at most 64 characters. Saving a name the toolset has replaces it in the derived toolset. */
  readonly name: string;
  /** What it does, for whoever starts it: the doc comment of its declaration and its prompt line. */
  readonly description: string;
  /** Its TypeScript: the default export takes the input and returns the output. */
  readonly source: string;
  /** JSON Schema of its input. */
  readonly input: JsonSchema;
  /** JSON Schema of its output. */
  readonly output: JsonSchema;
  /** The signals it waits for (`signal(name)`), each with the JSON Schema of its payload. Default none. */
  readonly signals?: { readonly [signal: string]: JsonSchema };
  /** The scope the derived toolset is saved for, kept among its owners (`ToolsetStore.putToolset`). Default: none. */
  readonly owner?: ToolsetOwner;
}

/** The form of a workflow's name: an identifier scripts write after `workflows.`. */
export const WORKFLOW_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest workflow name (and signal name): the same bound the agent tool's schema sets. */
export const WORKFLOW_NAME_MAX = 64;
/** Workflows one toolset may pin: each is a few lines of every prompt that uses the toolset. */
export const MAX_WORKFLOWS = 64;
/** Signals one workflow may declare: each is an overload of its `signal` declaration. */
const MAX_SIGNALS = 32;

/** A save request that is malformed (the engine turns it into `invalid_request` or `invalid_toolset`). */
export class WorkflowSpecError extends Error {
  constructor(
    readonly kind: "invalid_request" | "invalid_toolset",
    message: string,
  ) {
    super(message);
    this.name = "WorkflowSpecError";
  }
}

/** Checks everything but the code, and returns the workflow as a toolset pins it. Throws `WorkflowSpecError`. */
export function pinWorkflow(options: SaveWorkflowOptions, base: PinnedToolset, schemas: SchemaValidator): PinnedWorkflow {
  const { name, description, source, input, output, signals } = options;
  const bad = (message: string) => new WorkflowSpecError("invalid_request", message);
  if (typeof name !== "string" || !WORKFLOW_NAME.test(name) || name.length > WORKFLOW_NAME_MAX || name === "__proto__") {
    throw bad(
      `A workflow's name must be an identifier of at most ${WORKFLOW_NAME_MAX} characters (letters, digits, _; not starting with a digit), such as "triage_issue"; got ${JSON.stringify(name)}.`,
    );
  }
  if (typeof description !== "string" || description.trim() === "")
    throw bad(`Workflow ${name}: the description must say what it does, for whoever starts it.`);
  if (typeof source !== "string" || source.trim() === "")
    throw bad(`Workflow ${name}: the code is empty; it must default-export an async function of its input.`);
  const secret = findLiteralSecret({ description, code: source, input, output, signals }, "");
  if (secret !== undefined) {
    throw bad(
      `Workflow ${name}: its ${secret.path.replace(/^signals/, "signal schemas")} ${secret.inKey ? "has a key that looks like" : "holds what looks like"} a secret (${secret.looksLike}). ` +
        "A saved workflow is stored with its toolset, which anyone who knows the toolset's id can read; nothing was saved. " +
        'Leave the secret out: a script reaches a credential without seeing it (fetch(url, { credential: "NAME" }), set with tapedeck credentials set).',
    );
  }
  const known = base.workflows ?? {};
  if (!(name in known) && Object.keys(known).length >= MAX_WORKFLOWS) {
    throw bad(`Toolset ${base.id} pins ${MAX_WORKFLOWS} workflows, the most one toolset may: replace one (save it under its name) instead of adding another.`);
  }
  const checkSchema = (schema: unknown, what: string): JsonSchema => {
    if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
      throw bad(`Workflow ${name}: ${what} must be a JSON Schema (an object such as { "type": "object", "properties": { … } }).`);
    }
    const problem = schemas.schemaProblem(schema as JsonSchema);
    if (problem !== undefined) throw new WorkflowSpecError("invalid_toolset", `Workflow ${name}: ${what} cannot be compiled as a JSON Schema: ${problem}`);
    return schema as JsonSchema;
  };
  const entries: [string, JsonSchema][] = [];
  if (signals !== undefined) {
    if (typeof signals !== "object" || signals === null || Array.isArray(signals))
      throw bad(`Workflow ${name}: signals must map each signal's name to the JSON Schema of its payload.`);
    const given = Object.entries(signals);
    if (given.length > MAX_SIGNALS) throw bad(`Workflow ${name} declares ${given.length} signals; at most ${MAX_SIGNALS}.`);
    for (const [signal, schema] of given.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (signal === "" || signal.length > WORKFLOW_NAME_MAX)
        throw bad(`Workflow ${name}: a signal's name must be 1 to ${WORKFLOW_NAME_MAX} characters; got ${JSON.stringify(signal)}.`);
      entries.push([signal, checkSchema(schema, `the payload schema of signal "${signal}"`)]);
    }
  }
  // Defined, not assigned: a signal named by its author `__proto__` is a key like any other.
  const pinnedSignals: Record<string, JsonSchema> = Object.fromEntries(entries);
  return {
    description: description.trim(),
    source,
    input: checkSchema(input, "input"),
    output: checkSchema(output, "output"),
    ...(Object.keys(pinnedSignals).length === 0 ? {} : { signals: pinnedSignals }),
  };
}

/** The toolset derived from `base` that pins `workflow` as `name` (replacing a workflow of that name), with the base's tools, servers and other workflows. */
export function deriveWithWorkflow(base: PinnedToolset, name: string, workflow: PinnedWorkflow): PinnedToolset {
  const workflows = { ...base.workflows, [name]: workflow };
  const sorted = Object.fromEntries(
    Object.keys(workflows)
      .sort()
      .map((key) => [key, workflows[key]!]),
  );
  return toolsetOf(base.tools, base.servers ?? {}, base.id, sorted, base.budget);
}
