/**
 * A run's budget: how much one run may do before it is failed with `budget_exceeded`. Budgets
 * stop a runaway loop (a model's script that calls a tool thousands of times) at a bound the
 * operator chose, instead of at the journal's limit or the tool's bill. Each field is optional:
 * what a start leaves out, the toolset's budget gives, and what that leaves out, the engine's
 * defaults (5,000 calls, 256 MiB of results, 1,000 child runs; no per-tool limit).
 */
export interface RunBudget {
  /** Tool calls the run may make in all (primitives such as `sleep` and workflow calls do not count). */
  readonly maxCalls?: number;
  /** Calls the run may make of one tool, by `group.name` (a tool the toolset has). */
  readonly maxCallsPerTool?: { readonly [tool: string]: number };
  /** Bytes of tool results (their JSON) the run may receive in all. */
  readonly maxResultBytes?: number;
  /** Child runs the run may start (`workflows.<name>.start`). */
  readonly maxChildRuns?: number;
}

/** Which part of a budget ran out, as `budget_exceeded`'s `details.budget` names it. */
export type BudgetKind = "maxCalls" | "maxCallsPerTool" | "maxResultBytes" | "maxChildRuns";

/** The largest value any budget field may have: past it, it would be no bound at all. */
export const MAX_BUDGET_VALUE = 2 ** 40;

const KEYS = ["maxCalls", "maxCallsPerTool", "maxResultBytes", "maxChildRuns"];

/** What is wrong with a budget as written (empty when nothing is), each naming its field (`budget.maxCalls: …`). */
export function runBudgetProblems(value: unknown, where = "budget"): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [
      `${where} must be an object such as { "maxCalls": 500, "maxCallsPerTool": { "github.search": 50 }, "maxResultBytes": 10485760, "maxChildRuns": 20 }`,
    ];
  const problems: string[] = [];
  const budget = value as Record<string, unknown>;
  for (const key of Object.keys(budget)) if (!KEYS.includes(key)) problems.push(`${where} has an unknown key "${key}"; allowed keys: ${KEYS.join(", ")}`);
  const count = (field: string, n: unknown): void => {
    if (!(typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_BUDGET_VALUE))
      problems.push(`${where}.${field}: ${JSON.stringify(n)} is not a whole number from 0 to ${MAX_BUDGET_VALUE}`);
  };
  for (const field of ["maxCalls", "maxResultBytes", "maxChildRuns"]) if (budget[field] !== undefined) count(field, budget[field]);
  const perTool = budget.maxCallsPerTool;
  if (perTool !== undefined) {
    if (typeof perTool !== "object" || perTool === null || Array.isArray(perTool))
      problems.push(`${where}.maxCallsPerTool must be an object of limits by tool: { "github.search": 50 }`);
    else for (const [tool, n] of Object.entries(perTool)) count(`maxCallsPerTool["${tool}"]`, n);
  }
  return problems;
}
