import { toolPath, type JsonValue, type PinnedTool, type PinnedToolset } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { sha256Hex } from "../util/ids.js";
import type { ApprovalPolicy, CompiledPolicy } from "./approval-policy.js";
import type { CheckedDirectOptions, ErrorEnvelope, Lowering, Overflow } from "./direct-options.js";
import { isLazyTool, menuToolFind, toolFindDefinition } from "./lazy-menu.js";
import { modelNameTable } from "./model-name-table.js";
import { FETCH_BLOB, FETCH_BLOB_DEFINITION, OWN_TOOL_NAMES, type ModelToolDefinition } from "./own-tools.js";
import { globMatchesTool, type ToolNames } from "./tool-glob.js";

/**
 * The binding of a session's direct tools: the tool table fixed when `directTools` is created —
 * the toolset, every model tool with its model name and a digest of its definition, whether it
 * is lazy and its result budget, the approval rules, the lazy lowering, the error envelope —
 * recorded in the session (hidden from the model) and compared with the previous one.
 *
 * Canonical form: the record below as RFC 8785 canonical JSON, tools sorted by model name,
 * every default filled (`checkDirectOptions`), no field that is absent in one spelling and
 * present in another. Its id is `bd_` + SHA-256 of that text: two bindings are the same tool
 * table exactly when their ids are equal (content-addressed, like a toolset).
 *
 * A tool's digest covers what the model is given (description, input schema) — what the note
 * calls "changed" — and its output schema; everything else the call depends on (policy,
 * annotations, the server) is covered by the toolset id, also in the binding.
 */

/** Version of the canonical form: a new field bumps it, so an older binding never equals a newer one by accident. */
export const BINDING_VERSION = 1;

export interface BindingTool {
  /** The model's name for it. */
  readonly name: string;
  /** The toolset tool it calls (`group.name`); absent for direct mode's own tools. */
  readonly tool?: string;
  /** SHA-256 of the canonical JSON of its definition (description, input and output schema). */
  readonly digest: string;
  /** Present (true) when its definition is loaded on demand. */
  readonly lazy?: true;
  /** Its result budget; absent for direct mode's own tools, whose results are bounded already (`fetch_blob` pages, `tool_find` definitions). */
  readonly maxTokens?: number;
  readonly overflow?: Overflow;
}

export interface DirectBinding {
  readonly v: typeof BINDING_VERSION;
  readonly toolset: string;
  /** Sorted by `name`. */
  readonly tools: readonly BindingTool[];
  readonly approval: ApprovalPolicy;
  readonly lazy: { readonly lowering: Lowering } | null;
  readonly errorEnvelope: ErrorEnvelope | null;
}

/** A tool of the table, with what handling its calls needs (not part of the recorded binding). */
export interface BoundTool {
  readonly names: ToolNames;
  readonly tool: PinnedTool;
  readonly definition: ModelToolDefinition;
  readonly lazy: boolean;
  readonly budget: { readonly maxTokens: number; readonly overflow: Overflow };
}

export interface BoundTable {
  readonly id: string;
  readonly binding: DirectBinding;
  /** Toolset tools by model name. */
  readonly tools: ReadonlyMap<string, BoundTool>;
  /** Direct mode's own tools the table has (`tool_find`, `fetch_blob`), by name. */
  readonly own: ReadonlyMap<string, ModelToolDefinition>;
  readonly approval: CompiledPolicy;
  /** One per rewritten model name. */
  readonly warnings: readonly string[];
}

/**
 * Binds `tools` (default: every tool of `toolset`) with `options` (checked by
 * `checkDirectOptions`). Pure: the same inputs give the same binding and id.
 */
export function bindDirectTools(toolset: PinnedToolset, options: CheckedDirectOptions, tools: readonly PinnedTool[] = toolset.tools): BoundTable {
  const table = modelNameTable(tools, OWN_TOOL_NAMES);
  const bound = new Map<string, BoundTool>();
  for (const tool of tools) {
    const path = toolPath(tool);
    const names: ToolNames = { path, name: tool.name, modelName: table.byPath.get(path)! };
    bound.set(names.modelName, {
      names,
      tool,
      definition: { name: names.modelName, description: tool.description, inputSchema: inputSchemaOf(tool) },
      lazy: isLazyTool(options.lazy, tool, names),
      budget: budgetOf(options.results, names),
    });
  }
  const own = new Map<string, ModelToolDefinition>();
  const lazyTools = [...bound.values()].filter((t) => t.lazy);
  if (options.lazy !== null && lazyTools.length > 0) {
    const find =
      options.lazy.lowering === "menu"
        ? menuToolFind(lazyTools.map((t) => ({ modelName: t.names.modelName, description: t.tool.description })))
        : toolFindDefinition();
    own.set(find.name, find);
  }
  const spills = options.results.overflow === "spill" || [...bound.values()].some((t) => t.budget.overflow === "spill");
  if (spills) own.set(FETCH_BLOB, FETCH_BLOB_DEFINITION);

  const entries: BindingTool[] = [
    ...[...bound.values()].map((t) => ({
      name: t.names.modelName,
      tool: t.names.path,
      digest: definitionDigest(t.definition, t.tool.outputSchema),
      ...(t.lazy ? { lazy: true as const } : {}),
      ...t.budget,
    })),
    ...[...own.values()].map((d) => ({ name: d.name, digest: definitionDigest(d) })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const binding: DirectBinding = {
    v: BINDING_VERSION,
    toolset: toolset.id,
    tools: entries,
    approval: options.approval,
    lazy: options.lazy === null ? null : { lowering: options.lazy.lowering },
    errorEnvelope: options.errorEnvelope,
  };
  return { id: bindingId(binding), binding, tools: bound, own, approval: options.compiledApproval, warnings: table.warnings };
}

/** `bd_` + SHA-256 of the binding's canonical JSON. */
export function bindingId(binding: DirectBinding): string {
  return `bd_${sha256Hex(canonicalJson(binding as unknown as JsonValue))}`;
}

/** SHA-256 of what the model is given of a tool, and of its output schema. */
export function definitionDigest(definition: ModelToolDefinition, outputSchema?: JsonValue): string {
  const hashed = { description: definition.description, inputSchema: definition.inputSchema, ...(outputSchema === undefined ? {} : { outputSchema }) };
  return sha256Hex(canonicalJson(hashed));
}

/** Model APIs want an object schema: a boolean schema (`true`) is the empty object schema. */
function inputSchemaOf(tool: PinnedTool): ModelToolDefinition["inputSchema"] {
  return typeof tool.inputSchema === "object" ? tool.inputSchema : { type: "object" };
}

function budgetOf(results: CheckedDirectOptions["results"], names: ToolNames): BoundTool["budget"] {
  const entry = results.tools.find((t) => globMatchesTool(t.tool, names));
  return { maxTokens: entry?.maxTokens ?? results.maxTokens, overflow: entry?.overflow ?? results.overflow };
}
