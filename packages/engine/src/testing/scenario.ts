/**
 * The scenario of `test_script`: what the mocked world answers, and when. A scenario is JSON, so
 * a model can write one and a cassette (a run's recorded calls) is one. Format:
 *
 * ```jsonc
 * {
 *   "start": "2026-01-01T00:00:00Z",          // virtual start time (ISO or ms); default: now
 *   "tools": {
 *     "github.get_issue": { "result": { "title": "Bug" } },             // every call
 *     "github.search": [                                                  // one per call, in order
 *       { "result": [] },
 *       { "error": { "code": "rate_limited", "message": "slow down" }, "delay": "30s" }
 *     ],
 *     "slack.post": [{ "args": { "channel": "#ops" }, "result": { "ok": true } }]  // only calls whose args contain these
 *   },
 *   "signals": [{ "name": "approved", "at": "2h", "payload": { "by": "ann" } }],  // sent at a virtual time
 *   "approvals": [{ "tool": "github.merge", "decision": "reject", "reason": "not now", "after": "10m" }],
 *   "from_run": "run_…",                       // answer calls from what that run recorded
 *   "recorded": [{ "tool": "github.get_issue", "args": { "n": 1 }, "result": {}, "ms": 120 }]  // a cassette's calls
 * }
 * ```
 *
 * A call is answered by the first unused recorded call with the same tool and arguments, else by
 * the tool's mocks; with neither it fails with `no_mock`. Durations are milliseconds or strings
 * like "500ms", "30s", "10m", "2h", "10d", "1w".
 */
import { valueProblem } from "../util/value-bounds.js";
import type { JsonValue, ToolFailure } from "@tapedeck/protocol";
import { parseDuration } from "../util/duration.js";

export interface Scenario {
  /** Virtual start time, ms since the epoch. */
  readonly start?: number;
  readonly tools: Readonly<Record<string, readonly MockResult[]>>;
  /** Whether a tool's mock is one result for every call (an object) rather than a sequence (an array). */
  readonly repeat: ReadonlySet<string>;
  readonly signals: readonly ScenarioSignal[];
  readonly approvals: readonly ScenarioApproval[];
  readonly fromRun?: string;
  readonly recorded: readonly RecordedOutcome[];
}

export interface MockResult {
  /** Only calls whose arguments contain these (deep, for objects) take this result. */
  readonly args?: JsonValue;
  readonly outcome: { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure };
  readonly delayMs: number;
}

export interface ScenarioSignal {
  readonly name: string;
  readonly payload: JsonValue;
  /** Virtual ms after the start. */
  readonly atMs: number;
}

export interface ScenarioApproval {
  readonly tool: string;
  readonly decision: "approve" | "reject";
  readonly reason?: string;
  /** Virtual ms after the call asked for approval. */
  readonly afterMs: number;
}

/** A call a run recorded: what a cassette holds. */
export interface RecordedOutcome {
  readonly tool: string;
  readonly args: JsonValue;
  readonly outcome: { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure };
  /** How long the call took, replayed as a virtual delay. */
  readonly ms: number;
}

/** A scenario document that cannot be used; the message says where and what to write. */
export class ScenarioError extends Error {
  readonly code = "invalid_scenario";
  constructor(message: string) {
    super(message);
    this.name = "ScenarioError";
  }
}

const TOP_KEYS = new Set(["start", "tools", "signals", "approvals", "from_run", "recorded"]);

/** Reads a scenario document (already parsed JSON); throws `ScenarioError` saying what is wrong. */
export function parseScenario(value: unknown): Scenario {
  if (value === undefined || value === null) return { tools: {}, repeat: new Set(), signals: [], approvals: [], recorded: [] };
  // Its calls are matched by canonical JSON, which cannot hold a lone surrogate.
  const problem = valueProblem(value, { refuseLoneSurrogates: true });
  if (problem !== undefined) throw new ScenarioError(`the scenario is refused: ${problem}`);
  const doc = object(value, "the scenario");
  for (const key of Object.keys(doc)) {
    if (!TOP_KEYS.has(key)) throw new ScenarioError(`the scenario has an unknown key "${key}"; its keys are ${[...TOP_KEYS].join(", ")}`);
  }
  const tools: Record<string, MockResult[]> = {};
  const repeat = new Set<string>();
  for (const [tool, mock] of Object.entries(object(doc.tools ?? {}, "tools"))) {
    if (!tool.includes(".")) throw new ScenarioError(`tools["${tool}"]: name tools as "<group>.<name>", like the script calls them`);
    if (Array.isArray(mock)) {
      tools[tool] = mock.map((m, i) => mockResult(m, `tools["${tool}"][${i}]`));
    } else {
      tools[tool] = [mockResult(mock, `tools["${tool}"]`)];
      repeat.add(tool);
    }
  }
  const signals = list(doc.signals, "signals").map((s, i): ScenarioSignal => {
    const where = `signals[${i}]`;
    const o = object(s, where);
    onlyKeys(o, ["name", "payload", "at"], where);
    return { name: nonEmpty(o.name, `${where}.name`), payload: json(o.payload ?? null, `${where}.payload`), atMs: duration(o.at ?? 0, `${where}.at`) };
  });
  const approvals = list(doc.approvals, "approvals").map((a, i): ScenarioApproval => {
    const where = `approvals[${i}]`;
    const o = object(a, where);
    onlyKeys(o, ["tool", "decision", "reason", "after"], where);
    if (o.decision !== "approve" && o.decision !== "reject") throw new ScenarioError(`${where}.decision must be "approve" or "reject"`);
    const reason = o.reason === undefined ? undefined : nonEmpty(o.reason, `${where}.reason`);
    return {
      tool: nonEmpty(o.tool, `${where}.tool`),
      decision: o.decision,
      ...(reason === undefined ? {} : { reason }),
      afterMs: duration(o.after ?? 0, `${where}.after`),
    };
  });
  const recorded = list(doc.recorded, "recorded").map((r, i): RecordedOutcome => {
    const where = `recorded[${i}]`;
    const o = object(r, where);
    onlyKeys(o, ["tool", "args", "result", "error", "ms"], where);
    return {
      tool: nonEmpty(o.tool, `${where}.tool`),
      args: json(o.args ?? {}, `${where}.args`),
      outcome: outcome(o, where),
      ms: duration(o.ms ?? 0, `${where}.ms`),
    };
  });
  const start = doc.start === undefined ? undefined : startTime(doc.start);
  const fromRun = doc.from_run === undefined ? undefined : nonEmpty(doc.from_run, "from_run");
  return { tools, repeat, signals, approvals, recorded, ...(start === undefined ? {} : { start }), ...(fromRun === undefined ? {} : { fromRun }) };
}

function mockResult(value: unknown, where: string): MockResult {
  const o = object(value, where);
  onlyKeys(o, ["args", "result", "error", "delay"], where);
  return {
    ...(o.args === undefined ? {} : { args: json(o.args, `${where}.args`) }),
    outcome: outcome(o, where),
    delayMs: duration(o.delay ?? 0, `${where}.delay`),
  };
}

function outcome(o: Record<string, unknown>, where: string): MockResult["outcome"] {
  if (o.error !== undefined && o.result !== undefined) throw new ScenarioError(`${where} has both "result" and "error"; give one`);
  if (o.error === undefined) return { ok: true, value: json(o.result ?? null, `${where}.result`) };
  const e = object(o.error, `${where}.error`);
  onlyKeys(e, ["code", "message", "retryable", "details"], `${where}.error`);
  if (e.retryable !== undefined && typeof e.retryable !== "boolean") throw new ScenarioError(`${where}.error.retryable must be true or false`);
  return {
    ok: false,
    error: {
      code: nonEmpty(e.code, `${where}.error.code`),
      message: typeof e.message === "string" ? e.message : "",
      ...(e.retryable === undefined ? {} : { retryable: e.retryable }),
      ...(e.details === undefined ? {} : { details: json(e.details, `${where}.error.details`) }),
    },
  };
}

/** A duration as the scripts write them: ms, or "30s", "2h", "10d"… */
export function duration(value: unknown, where: string): number {
  if (typeof value === "number" || typeof value === "string") {
    try {
      return parseDuration(value, where);
    } catch (error) {
      throw new ScenarioError((error as Error).message);
    }
  }
  throw new ScenarioError(`${where} must be a duration: milliseconds (a number >= 0) or a string like "500ms", "30s", "10m", "2h", "10d"`);
}

function startTime(value: unknown): number {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return Date.parse(value);
  throw new ScenarioError(`start must be a time: an ISO date like "2026-01-01T00:00:00Z" or ms since the epoch`);
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ScenarioError(`${where} must be an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ScenarioError(`${where} must be an array`);
  return value;
}

function nonEmpty(value: unknown, where: string): string {
  if (typeof value !== "string" || value === "") throw new ScenarioError(`${where} must be a non-empty string`);
  return value;
}

function onlyKeys(o: Record<string, unknown>, keys: readonly string[], where: string): void {
  for (const key of Object.keys(o)) {
    if (!keys.includes(key)) throw new ScenarioError(`${where} has an unknown key "${key}"; allowed: ${keys.join(", ")}`);
  }
}

function json(value: unknown, where: string): JsonValue {
  try {
    if (JSON.stringify(value) === undefined) throw new Error("not JSON");
  } catch {
    throw new ScenarioError(`${where} must be JSON`);
  }
  return value as JsonValue;
}
