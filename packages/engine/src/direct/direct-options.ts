import { checkApprovalPolicy, type ApprovalPolicy, type CompiledPolicy, type PolicyError } from "./approval-policy.js";
import { parsePointer } from "../toolset/json-pointer.js";
import { globProblem } from "./tool-glob.js";

/**
 * The options of `directTools({...})` that shape the tool table, as JSON (they cross HTTP and are
 * pinned in the session's binding): approval rules, lazy loading, result budgets, the business
 * error envelope. `checkDirectOptions` validates all of them at once, naming the path of each
 * mistake, and fills the defaults, so that two spellings of the same options bind the same way.
 *
 * Invariant: never throws; on errors, nothing is bound (the caller reports every error at once).
 */

/** How deferred tools reach the model (`lazy-menu.ts`, `anthropic-lowering.ts`, `openai-lowering.ts`). */
export const Lowering = {
  /** Any API: one-line summaries in `tool_find`'s description; definitions loaded by calling it. */
  menu: "menu",
  /** Anthropic Messages: `defer_loading: true` and `tool_reference` blocks (the prompt prefix does not change). */
  anthropic: "anthropic",
  /** OpenAI Responses: `defer_loading: true` and a client-executed `tool_search`. */
  openai: "openai",
} as const;
export type Lowering = (typeof Lowering)[keyof typeof Lowering];

export interface LazyOptions {
  readonly lowering: Lowering;
  /** Tools made lazy (globs on path, name or model name). Default: every tool. */
  readonly tools?: readonly string[];
  /** Only tools whose annotations say they are read-only (`readOnlyHint`), as seed 002's recipe does. Default false. */
  readonly readOnly?: boolean;
}

/** What happens to a result over its budget. */
export const Overflow = {
  /** A preview (first and last lines) and a handle `fetch_blob` reads the whole result by. */
  spill: "spill",
  /** The same preview, and the rest is not kept. */
  truncate: "truncate",
} as const;
export type Overflow = (typeof Overflow)[keyof typeof Overflow];

export interface ResultBudget {
  /** Estimated tokens a result may have (`token-estimate.ts`). Default 16,000. */
  readonly maxTokens?: number;
  /** Default `spill`. */
  readonly overflow?: Overflow;
}

export interface ResultOptions extends ResultBudget {
  /** Per-tool budgets, first matching glob wins: `[{ tool: "tiktok.tool_list", maxTokens: 100000 }]`. */
  readonly tools?: readonly (ResultBudget & { readonly tool: string })[];
}

/** Where a successful result's JSON says it failed (seed 002's business errors, `business-errors.ts`). */
export interface ErrorEnvelope {
  /** JSON Pointer to the code: a non-zero number (or a string of one, `"40001"`) is an error; 0, absent or anything else is not. */
  readonly code: string;
  /** JSON Pointer to the message. */
  readonly message: string;
}

export interface DirectOptions {
  readonly approval?: ApprovalPolicy;
  readonly lazy?: LazyOptions;
  readonly results?: ResultOptions;
  readonly errorEnvelope?: ErrorEnvelope;
}

/** The options with every default filled: what a binding records. */
export interface CheckedDirectOptions {
  readonly approval: ApprovalPolicy;
  readonly compiledApproval: CompiledPolicy;
  readonly lazy: { readonly lowering: Lowering; readonly tools: readonly string[]; readonly readOnly: boolean } | null;
  readonly results: {
    readonly maxTokens: number;
    readonly overflow: Overflow;
    readonly tools: readonly { tool: string; maxTokens: number; overflow: Overflow }[];
  };
  readonly errorEnvelope: ErrorEnvelope | null;
}

/** Seed 002's budget: large enough for most results, small enough that a few fit a context window. */
export const DEFAULT_MAX_TOKENS = 16_000;
/** A budget above this is no budget: a context window holds about this much. */
export const MAX_RESULT_TOKENS = 1_000_000;

export type CheckedOptions = { readonly ok: true; readonly options: CheckedDirectOptions } | { readonly ok: false; readonly errors: readonly PolicyError[] };

export function checkDirectOptions(options: unknown, path = "directTools"): CheckedOptions {
  const errors: PolicyError[] = [];
  const fail = (where: string, message: string) => errors.push({ path: where, message });
  if (options !== undefined && !isObject(options)) return { ok: false, errors: [{ path, message: "must be an object" }] };
  const input = options ?? {};
  for (const key of Object.keys(input))
    if (!["approval", "lazy", "results", "errorEnvelope"].includes(key))
      fail(`${path}.${key}`, "is not an option of the tool table (approval, lazy, results, errorEnvelope)");

  const approval = checkApprovalPolicy(input.approval, `${path}.approval`);
  errors.push(...approval.errors);
  const lazy = checkLazy(input.lazy, `${path}.lazy`, fail);
  const results = checkResults(input.results, `${path}.results`, fail);
  let errorEnvelope: ErrorEnvelope | null = null;
  if (input.errorEnvelope !== undefined) {
    const where = `${path}.errorEnvelope`;
    if (!isObject(input.errorEnvelope)) fail(where, 'must be { code: "/code", message: "/message" } (JSON Pointers into the result)');
    else {
      for (const key of Object.keys(input.errorEnvelope)) if (key !== "code" && key !== "message") fail(`${where}.${key}`, "is not a field (code, message)");
      const pointers = ["code", "message"].map((field) => {
        const value = (input.errorEnvelope as Record<string, unknown>)[field];
        const parsed = typeof value === "string" ? parsePointer(value) : { ok: false as const, problem: 'must be a JSON Pointer string like "/code"' };
        if (!parsed.ok) fail(`${where}.${field}`, parsed.problem);
        return value as string;
      });
      errorEnvelope = { code: pointers[0]!, message: pointers[1]! };
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, options: { approval: approval.normalized, compiledApproval: approval.compiled, lazy, results, errorEnvelope } };
}

function checkLazy(value: unknown, where: string, fail: (path: string, message: string) => void): CheckedDirectOptions["lazy"] {
  if (value === undefined) return null;
  if (!isObject(value)) {
    fail(where, 'must be { lowering: "menu" | "anthropic" | "openai", tools?: [...globs], readOnly?: boolean }');
    return null;
  }
  for (const key of Object.keys(value))
    if (!["lowering", "tools", "readOnly"].includes(key)) fail(`${where}.${key}`, "is not a field (lowering, tools, readOnly)");
  const lowering = value.lowering;
  if (typeof lowering !== "string" || !Object.hasOwn(Lowering, lowering))
    fail(`${where}.lowering`, `must be "menu", "anthropic" or "openai", not ${JSON.stringify(lowering) ?? "undefined"}`);
  const tools = checkGlobs(value.tools, `${where}.tools`, fail) ?? ["*"];
  if (value.readOnly !== undefined && typeof value.readOnly !== "boolean") fail(`${where}.readOnly`, "must be true or false");
  return { lowering: lowering as Lowering, tools, readOnly: value.readOnly === true };
}

function checkResults(value: unknown, where: string, fail: (path: string, message: string) => void): CheckedDirectOptions["results"] {
  const defaults = { maxTokens: DEFAULT_MAX_TOKENS, overflow: "spill" as Overflow, tools: [] };
  if (value === undefined) return defaults;
  if (!isObject(value)) {
    fail(where, 'must be { maxTokens?: number, overflow?: "spill" | "truncate", tools?: [{ tool, maxTokens?, overflow? }] }');
    return defaults;
  }
  for (const key of Object.keys(value))
    if (!["maxTokens", "overflow", "tools"].includes(key)) fail(`${where}.${key}`, "is not a field (maxTokens, overflow, tools)");
  const budget = checkBudget(value, where, fail, defaults);
  const tools: { tool: string; maxTokens: number; overflow: Overflow }[] = [];
  if (value.tools !== undefined) {
    if (!Array.isArray(value.tools)) fail(`${where}.tools`, "must be an array of { tool, maxTokens?, overflow? }");
    else
      value.tools.forEach((entry: unknown, index) => {
        const at = `${where}.tools[${index}]`;
        if (!isObject(entry)) return fail(at, "must be { tool, maxTokens?, overflow? }");
        for (const key of Object.keys(entry))
          if (!["tool", "maxTokens", "overflow"].includes(key)) fail(`${at}.${key}`, "is not a field (tool, maxTokens, overflow)");
        const problem = globProblem(entry.tool);
        if (problem !== undefined) fail(`${at}.tool`, problem);
        tools.push({ tool: entry.tool as string, ...checkBudget(entry, at, fail, budget) });
      });
  }
  return { ...budget, tools };
}

function checkBudget(
  value: Record<string, unknown>,
  where: string,
  fail: (path: string, message: string) => void,
  defaults: { maxTokens: number; overflow: Overflow },
): { maxTokens: number; overflow: Overflow } {
  const { maxTokens, overflow } = value;
  if (maxTokens !== undefined && (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_RESULT_TOKENS)) {
    fail(`${where}.maxTokens`, `must be a whole number of tokens from 1 to ${MAX_RESULT_TOKENS}`);
  }
  if (overflow !== undefined && overflow !== "spill" && overflow !== "truncate") fail(`${where}.overflow`, 'must be "spill" or "truncate"');
  return {
    maxTokens: typeof maxTokens === "number" ? maxTokens : defaults.maxTokens,
    overflow: overflow === "spill" || overflow === "truncate" ? overflow : defaults.overflow,
  };
}

function checkGlobs(value: unknown, where: string, fail: (path: string, message: string) => void): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    fail(where, 'must be an array of tool globs like ["github.*", "*_list"]');
    return undefined;
  }
  value.forEach((glob: unknown, index) => {
    const problem = globProblem(glob);
    if (problem !== undefined) fail(`${where}[${index}]`, problem);
  });
  return value as string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
