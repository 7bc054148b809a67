import { PrimitiveTool, toolFailure, type BudgetKind, type JournalEntry, type JsonValue, type RunBudget, type RunError } from "@tapedeck/protocol";
import { isPrimitive } from "./primitives.js";

/**
 * A run's budget as it is spent (`RunBudget`): how many tool calls it issued in all and of each
 * tool, how many bytes of tool results it received, how many child runs it started.
 *
 * Invariants:
 * - Counted from the journal, so every execution of a run (after a crash, a park, on another
 *   node) starts from what the run spent: `fromJournal` counts the calls issued (`call.scheduled`
 *   and `call.rejected`, primitives apart), the workflow starts issued, and the results received
 *   live (`call.completed` of a tool call, not a fork's reused result, which was never sent).
 * - A step whose calls would go past a budget is refused whole (`admit`), before any of its calls
 *   is journaled or sent: the run fails there, and a replay after a crash reaches the same step
 *   with the same counts and fails the same way. So with `maxCalls: N` the tool sees N calls.
 * - A live result that takes the bytes received past `maxResultBytes` is not delivered: the run
 *   fails with it (`receive`).
 */

/** A budget with every field given: the engine's defaults under the toolset's under the start's. */
export interface EffectiveBudget {
  readonly maxCalls: number;
  readonly maxCallsPerTool: Readonly<Record<string, number>>;
  readonly maxResultBytes: number;
  readonly maxChildRuns: number;
}

/** The engine's default budget: far past what a run that works does, close enough to stop a loop that runs away. */
export type DefaultBudget = Omit<EffectiveBudget, "maxCallsPerTool">;

/** Field by field, the start's over the toolset's over the engine's (per-tool limits merged by tool). */
export function effectiveBudget(defaults: DefaultBudget, toolset: RunBudget | undefined, start: RunBudget | undefined): EffectiveBudget {
  return {
    maxCalls: start?.maxCalls ?? toolset?.maxCalls ?? defaults.maxCalls,
    maxCallsPerTool: { ...toolset?.maxCallsPerTool, ...start?.maxCallsPerTool },
    maxResultBytes: start?.maxResultBytes ?? toolset?.maxResultBytes ?? defaults.maxResultBytes,
    maxChildRuns: start?.maxChildRuns ?? toolset?.maxChildRuns ?? defaults.maxChildRuns,
  };
}

export class RunBudgetMeter {
  #calls = 0;
  readonly #perTool = new Map<string, number>();
  #resultBytes = 0;
  #children = 0;
  /** The calls whose results are counted: each once, also when a delivery is made again after the sandbox was lost. */
  readonly #received = new Set<number>();

  constructor(readonly budget: EffectiveBudget) {}

  /** The meter of a run whose journal is `entries`: what it spent so far. */
  static fromJournal(budget: EffectiveBudget, entries: readonly JournalEntry[]): RunBudgetMeter {
    const meter = new RunBudgetMeter(budget);
    const tools = new Set<number>();
    for (const entry of entries) {
      if (entry.kind === "call.scheduled" || entry.kind === "call.rejected") {
        meter.#count(entry.tool);
        if (!isPrimitive(entry.tool)) tools.add(entry.seq);
      } else if (entry.kind === "call.completed" && tools.has(entry.seq) && entry.reusedFrom === undefined) {
        meter.#resultBytes += resultBytes(entry.result);
        meter.#received.add(entry.seq);
      }
    }
    return meter;
  }

  /** Counts a step's calls, in seq order, if they all fit; else counts none and answers the run's error (at the first that does not fit). */
  admit(calls: readonly { readonly seq: number; readonly tool: string }[]): RunError | undefined {
    let total = this.#calls;
    let children = this.#children;
    const perTool = new Map<string, number>();
    for (const { seq, tool } of calls) {
      if (tool === PrimitiveTool.workflowStart) {
        if (++children > this.budget.maxChildRuns) return this.#exceeded("maxChildRuns", this.budget.maxChildRuns, seq, tool);
        continue;
      }
      if (isPrimitive(tool)) continue;
      if (++total > this.budget.maxCalls) return this.#exceeded("maxCalls", this.budget.maxCalls, seq, tool);
      const limit = this.budget.maxCallsPerTool[tool];
      const used = (perTool.get(tool) ?? this.#perTool.get(tool) ?? 0) + 1;
      perTool.set(tool, used);
      if (limit !== undefined && used > limit) return this.#exceeded("maxCallsPerTool", limit, seq, tool);
    }
    for (const { tool } of calls) this.#count(tool);
    return undefined;
  }

  /** Counts a live result of call `seq` (of `tool`); answers the run's error when it takes the bytes received past the budget. */
  receive(seq: number, tool: string, value: JsonValue): RunError | undefined {
    if (isPrimitive(tool) || this.#received.has(seq)) return undefined;
    this.#received.add(seq);
    const bytes = resultBytes(value);
    this.#resultBytes += bytes;
    if (this.#resultBytes <= this.budget.maxResultBytes) return undefined;
    return this.#exceeded(
      "maxResultBytes",
      this.budget.maxResultBytes,
      seq,
      tool,
      `its result of ${bytes} bytes brought the results received to ${this.#resultBytes} bytes`,
    );
  }

  #count(tool: string): void {
    if (tool === PrimitiveTool.workflowStart) this.#children++;
    else if (!isPrimitive(tool)) {
      this.#calls++;
      this.#perTool.set(tool, (this.#perTool.get(tool) ?? 0) + 1);
    }
  }

  #exceeded(kind: BudgetKind, limit: number, seq: number, tool: string, what?: string): RunError {
    const message = budgetMessage(kind, limit, seq, tool, what);
    const details = { budget: kind, limit, ...(kind === "maxCallsPerTool" || kind === "maxResultBytes" ? { tool } : {}) };
    return { kind: "limit", name: "BudgetExceeded", message, failure: toolFailure("budget_exceeded", message, { details }), call: { seq, tool } };
  }
}

/** Says what ran out, its limit, and what to do: for whoever reads the run's error (often a model). */
function budgetMessage(kind: BudgetKind, limit: number, seq: number, tool: string, what: string | undefined): string {
  const budget = `budget_exceeded: the run's budget`;
  const raise = `the start's or the toolset's budget.${kind}`;
  switch (kind) {
    case "maxCalls":
      return `${budget} of ${limit} tool calls (maxCalls) ran out: call #${seq} (${tool}) was not sent and the run failed. Make fewer calls (stop the loop, batch, keep what a call answered), or raise ${raise}.`;
    case "maxCallsPerTool":
      return `${budget} of ${limit} calls of ${tool} (maxCallsPerTool) ran out: call #${seq} was not sent and the run failed. Call ${tool} fewer times (stop the loop, keep what it answered), or raise ${raise}["${tool}"].`;
    case "maxChildRuns":
      return `${budget} of ${limit} child runs (maxChildRuns) ran out: call #${seq} (${tool}) started no run and the run failed. Start fewer workflows (give one more work), or raise ${raise}.`;
    case "maxResultBytes":
      return `${budget} of ${limit} bytes of tool results (maxResultBytes) ran out: call #${seq} (${tool}) was answered but ${what ?? "its result went past it"}, and the run failed. Ask tools for less (filters, fields, pages), or raise ${raise}.`;
  }
}

function resultBytes(value: JsonValue): number {
  return Buffer.byteLength(JSON.stringify(value));
}
