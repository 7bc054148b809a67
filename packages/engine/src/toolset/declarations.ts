import type { JsonSchema, PinnedTool, PinnedWorkflow } from "@tapedeck/protocol";
import { isHttpFetch } from "../sources/http/http-tool.js";
import { declarableShape } from "./observed-shape.js";
import { isIdentifier, jsDoc, propertyKey, schemaToType } from "./schema-to-type.js";
import { importableTools } from "./script-features.js";
import { renderWorkflowsTypescript, workflowPromptLines } from "./workflow-declarations.js";

/**
 * The declarations of the module a script imports its tools from, in two renderings: an
 * ambient `.d.ts` module for the type-checker, and a compact listing for the model's prompt.
 *
 * Invariants:
 * - Deterministic: groups and tools are sorted by code unit (not by locale), so the same
 *   toolset gives the same text on every machine, and the prompt's cache stays warm.
 * - Group names are identifiers (the toolset parser rejects others); tool names are kept as
 *   their source defines them, quoted when they are not identifiers.
 */

/** The module specifier scripts import tools from. */
export const DECLARATIONS_MODULE = "tapedeck:tools";

export interface Declarations {
  /** An ambient module `declare module "tapedeck:tools" { … }`, for the type-checker. */
  readonly typescript: string;
  /** An import line, then one line per tool, for the model's prompt. */
  readonly prompt: string;
}

/** A description in the prompt is cut past this many characters: one line per tool, read at a glance. */
const PROMPT_DESCRIPTION_MAX = 160;

/**
 * Renders the declarations of `tools` (and of the `workflows` global, when the toolset pins
 * workflows). Never throws: a schema it cannot express becomes `unknown`.
 */
export function renderDeclarations(
  tools: readonly PinnedTool[],
  observed: Readonly<Record<string, JsonSchema>> = {},
  workflows: Readonly<Record<string, PinnedWorkflow>> = {},
): Declarations {
  // A tool without an output schema is rendered with the shape of its recorded results, if any
  // (as a declarable shape: one recorded before keys were judged names no data key).
  const withObserved = tools.map((tool) => {
    const shape = observed[`${tool.group}.${tool.name}`];
    return tool.outputSchema === undefined && shape !== undefined ? { ...tool, outputSchema: declarableShape(shape), observed: true } : tool;
  });
  // Built-ins are globals (`fetch`), declared with the sandbox's globals, not in the module.
  const groups = groupTools(importableTools(withObserved));
  const http = tools.find(isHttpFetch);
  const prompt = [renderPrompt(groups), http ? fetchPromptLine(http.http?.allow ?? []) : "", ...workflowPromptLines(workflows, summarize), WAIT_PROMPT_LINES]
    .filter((part) => part !== "")
    .join("\n");
  // The `workflows` global is declared after the module, at the top level: only these toolsets have it.
  return { typescript: renderTypescript(groups) + renderWorkflowsTypescript(workflows), prompt };
}

/** Tools by group, groups and tools sorted. */
function groupTools(tools: readonly PinnedTool[]): ReadonlyMap<string, readonly PinnedTool[]> {
  const sorted = [...tools].sort((a, b) => compare(a.group, b.group) || compare(a.name, b.name));
  const groups = new Map<string, PinnedTool[]>();
  for (const tool of sorted) groups.set(tool.group, [...(groups.get(tool.group) ?? []), tool]);
  return groups;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function renderTypescript(groups: ReadonlyMap<string, readonly PinnedTool[]>): string {
  const body = [...groups].map(([group, tools]) =>
    [`  /** Tools of group \`${group}\`. */`, `  export const ${group}: {`, ...tools.map((tool) => renderMember(tool)), "  };"].join("\n"),
  );
  return [`declare module ${JSON.stringify(DECLARATIONS_MODULE)} {`, ...body, TOOL_ERROR, "}", ""].join("\n");
}

/**
 * One tool alone, as a member of its group the way `typescript` declares it: for showing a few
 * tools (search results) without the whole module. `ToolError` is not repeated.
 */
export function renderToolDeclaration(tool: PinnedTool): string {
  return [`declare const ${tool.group}: {`, renderMember(tool, "  "), "};"].join("\n");
}

/** One tool as a method of its group: JSDoc, then `name(args): Promise<result>;`. */
function renderMember(tool: PinnedTool, indent = "    "): string {
  const args = schemaToType(tool.inputSchema, { style: "ts", indent });
  const result = tool.outputSchema === undefined ? "unknown" : schemaToType(tool.outputSchema, { style: "ts", indent });
  const optional = argsOptional(tool) ? "?" : "";
  const signature = `${indent}${propertyKey(tool.name)}(args${optional}: ${args}): Promise<${result}>;`;
  const observed = (tool as { observed?: boolean }).observed === true;
  const doc = [
    tool.description.trim(),
    approvalDoc(tool),
    observed ? "@observed The result type is inferred from recorded results (keys and types); the tool declares none." : "",
  ]
    .filter((s) => s !== "")
    .join("\n\n");
  return doc === "" ? signature : `${jsDoc(doc, indent)}\n${signature}`;
}

/**
 * True when a call may leave out `args`: its input schema requires no property. A schema that
 * requires something we cannot see at the top level (a `$ref`, `anyOf`, a non-object type)
 * keeps `args` required: the type-checker then asks for too much rather than too little.
 */
function argsOptional(tool: PinnedTool): boolean {
  const schema = tool.inputSchema;
  if (typeof schema === "boolean") return true;
  const combined = ["$ref", "anyOf", "oneOf", "allOf"].some((k) => k in schema);
  const type = schema.type;
  const objectType = type === undefined || type === "object" || (Array.isArray(type) && type.includes("object"));
  const required = Array.isArray(schema.required) ? schema.required.length : 0;
  return !combined && objectType && required === 0;
}

function renderPrompt(groups: ReadonlyMap<string, readonly PinnedTool[]>): string {
  const names = [...groups.keys()];
  const lines = [...groups.values()].flat().map(promptLine);
  // A toolset of built-ins only (`http`) has nothing to import.
  const imports = names.length === 0 ? [] : [`import { ${names.join(", ")} } from ${JSON.stringify(DECLARATIONS_MODULE)};`];
  return [...imports, ...lines].join("\n");
}

/** `github.list_issues({ repo: string }) → { number: number }[] · List the issues of a repository.` */
function promptLine(tool: PinnedTool): string {
  const callee = isIdentifier(tool.name) ? `${tool.group}.${tool.name}` : `${tool.group}[${JSON.stringify(tool.name)}]`;
  const args = schemaToType(tool.inputSchema, { style: "prompt" });
  const result = tool.outputSchema === undefined ? "unknown" : schemaToType(tool.outputSchema, { style: "prompt" });
  const observed = (tool as { observed?: boolean }).observed === true ? " (observed)" : "";
  // Before the summary, which may be cut: a model that does not know a call waits for a person polls or gives up.
  const asks = approvalAsked(tool);
  const approval = asks === "always" ? ` · ${APPROVAL_PROMPT}` : asks === "sometimes" ? ` · ${SOME_APPROVAL_PROMPT}` : "";
  const summary = summarize(tool.description);
  return `${callee}(${args === "{}" ? "" : args}) → ${result}${observed}${approval}${summary === "" ? "" : ` · ${summary}`}`;
}

/** What a tool whose policy requires approval says in the prompt, and in its JSDoc. */
const APPROVAL_PROMPT = "Needs a person's approval: each call waits for it (the run holds nothing meanwhile)";
const APPROVAL_DOC =
  '@approval Each call waits for a person to approve it before it is sent; the run holds nothing meanwhile. A rejected call throws ToolError "approval_rejected" (it was not sent).';

/** What a tool's approval rules (when it has any) say in its prompt line and JSDoc. */
const SOME_APPROVAL_PROMPT = "Some calls (by their arguments) need a person's approval and wait for it";

/** Whether a tool's calls wait for approval: every call, some (rules on the arguments), or none. */
function approvalAsked(tool: PinnedTool): "always" | "sometimes" | "never" {
  const rules = tool.policy.approvalRules;
  if (tool.policy.approval || rules?.kind === "always" || rules?.kind === "unless_auto_approved") return "always";
  if (rules?.kind !== "rules") return "never";
  return rules.otherwise.kind === "never" ? "sometimes" : "always";
}

function approvalDoc(tool: PinnedTool): string {
  const asks = approvalAsked(tool);
  if (asks === "always") return APPROVAL_DOC;
  if (asks === "never" || tool.policy.approvalRules?.kind !== "rules") return "";
  const reasons = [...new Set(tool.policy.approvalRules.rules.filter((rule) => rule.action === "ask").map((rule) => rule.reason))];
  return `@approval ${SOME_APPROVAL_PROMPT}: ${reasons.join("; ")}. The run holds nothing meanwhile; a rejected call throws ToolError "approval_rejected" (it was not sent).`;
}

/** The `fetch` global, for a toolset that enables `http`: what it takes, what it gives, where it may go. */
/** The durable waits every script has: a model that is not told of them polls or gives up. */
const WAIT_PROMPT_LINES = [
  'sleep(duration) · Built-in: durable wait, ms or "30s" "2h" "10d"; the run holds nothing meanwhile.',
  "signal<T>(name, { timeout? }) → T · Built-in: waits for the signal `name` sent to the run (kept if sent earlier).",
  "webhook(name) → { url } · Built-in: a URL bound to this run; a POST of JSON to it is signal(name).",
].join("\n");

function fetchPromptLine(allow: readonly string[]): string {
  return (
    `fetch(url, { method?, headers?, body?, credential? }) → { status, ok, headers.get(name), text(), json() } · ` +
    `Built-in: HTTP to ${allow.join(", ")} only; journaled, never re-sent on replay; refusals are ToolError "refused"; credentials set for a host are sent for you (credential: "NAME" picks one).`
  );
}

/** The first sentence of the description's first paragraph, on one line, cut to `PROMPT_DESCRIPTION_MAX`. */
function summarize(description: string): string {
  const paragraph = description.trim().split(/\r?\n\s*\r?\n/)[0] ?? "";
  const flat = paragraph.replace(/\s+/g, " ").trim();
  // A sentence ends at `.`, `!` or `?` before a capital, so `e.g. foo` and `v1.2` stay whole.
  const sentence = /^.*?[.!?](?=\s+[A-Z])/.exec(flat)?.[0] ?? flat;
  if (sentence.length <= PROMPT_DESCRIPTION_MAX) return sentence;
  const cut = sentence.slice(0, PROMPT_DESCRIPTION_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > PROMPT_DESCRIPTION_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The error every failed call rejects with, as the script sees it. Mirrors the sandbox's class. */
const TOOL_ERROR = `  /**
   * A failed tool call. \`code\` is stable (\`invalid_arguments\`, \`tool_error\`, \`timeout\`,
   * \`outcomeUnknown\`, \`approval_rejected\`, … or the tool's own code): branch on it, not on
   * \`message\`. \`retryable\` is true when the same call may succeed later.
   */
  export class ToolError extends Error {
    readonly name: "ToolError";
    /** Stable failure code. */
    readonly code: string;
    /** True when sending the same call again later may succeed. */
    readonly retryable?: boolean;
    /** Details the tool gave with its failure. */
    readonly details?: unknown;
    /** The tool whose call failed, as \`group.name\`. */
    readonly tool?: string;
    /** The call's number in the run, from 1. */
    readonly seq?: number;
    constructor(code: string, message: string, options?: { retryable?: boolean; details?: unknown });
  }`;
