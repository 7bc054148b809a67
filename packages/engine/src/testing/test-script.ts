/**
 * `test_script`: runs a script against a scenario in virtual time, on an engine of its own (an
 * in-memory store, a virtual clock, the scenario as its only tool source), and reports what
 * happened: the output or error, every call with its virtual times, the log, the virtual
 * duration. Sleeps, mock delays and scenario events cost no real time: whenever the run has
 * nothing to do but wait, the clock jumps to the next timer.
 */
import {
  PrimitiveTool,
  type JournalEntry,
  type JsonValue,
  type RunWait,
  type TestCall,
  type TestReport as ProtocolTestReport,
  type ToolFailure,
} from "@tapedeck/protocol";
import type { VirtualClock } from "../clock.js";
import type { ExecutionResult } from "../runs/run-executor.js";
import type { ScenarioSource } from "./scenario-source.js";
import type { Scenario, ScenarioApproval } from "./scenario.js";

/** What a test run did, with the id of its (throwaway) run. */
export type TestReport = ProtocolTestReport & { readonly runId: string };

/** What the test needs of its engine (the engine passes itself, opened for the test). */
export interface TestEngine {
  start(options: {
    readonly toolset: string;
    readonly source: string;
    readonly input?: JsonValue;
  }): Promise<{ readonly kind: "started"; readonly runId: string } | { readonly kind: "refused" }>;
  settled(runId: string): Promise<ExecutionResult | undefined>;
  journal(runId: string, from?: number, limit?: number): Promise<JournalEntry[]>;
  signal(runId: string, name: string, payload: JsonValue): Promise<unknown>;
  approve(runId: string, seq: number, options?: { readonly reason?: string }): Promise<unknown>;
  reject(runId: string, seq: number, options?: { readonly reason?: string }): Promise<unknown>;
  on(listener: (event: { readonly type: string; readonly runId?: string; readonly wait?: RunWait }) => void): () => void;
}

export async function runTest(
  engine: TestEngine,
  clock: VirtualClock,
  source: ScenarioSource,
  scenario: Scenario,
  options: { readonly toolset: string; readonly source: string; readonly input?: JsonValue },
): Promise<TestReport> {
  const start = clock.now();
  const approvals = [...scenario.approvals];
  const errors: unknown[] = [];
  // Set once started; the listener is registered before, so no request can come unseen.
  const run: { id?: string } = {};
  // Decisions the scenario gives are made `after` the call asks, in virtual time.
  engine.on((event) => {
    const runId = run.id;
    if (event.type !== "approval.requested" || runId === undefined || event.runId !== runId || !event.wait || event.wait.kind !== "approval") return;
    const { seq, tool } = event.wait;
    const index = approvals.findIndex((a) => a.tool === tool);
    if (index < 0) return;
    const [approval] = approvals.splice(index, 1) as [ScenarioApproval];
    clock.setTimer(clock.now() + approval.afterMs, () =>
      (approval.decision === "approve"
        ? engine.approve(runId, seq, approval.reason === undefined ? {} : { reason: approval.reason })
        : engine.reject(runId, seq, approval.reason === undefined ? {} : { reason: approval.reason })
      ).catch((error: unknown) => errors.push(error)),
    );
  });
  const started = await engine.start(options);
  if (started.kind !== "started") throw new Error("the test script was refused after it had type-checked");
  run.id = started.runId;
  // Registered before the run can idle: the clock only moves when the run waits.
  for (const signal of scenario.signals) {
    clock.setTimer(start + signal.atMs, () => engine.signal(started.runId, signal.name, signal.payload).catch((error: unknown) => errors.push(error)));
  }
  const result = await engine.settled(started.runId);
  if (errors.length > 0) throw errors[0];
  if (!result) throw new Error(`test run ${started.runId} stopped without an end`);
  const journal = await engine.journal(started.runId, 0, Number.MAX_SAFE_INTEGER);
  return {
    runId: started.runId,
    status: result.status,
    ...(result.status === "completed" ? { output: result.output } : {}),
    ...(result.status === "failed" ? { error: result.error } : {}),
    ...(result.status === "waiting" ? { waits: result.waits } : {}),
    calls: traceCalls(journal, start, source),
    logs: journal.flatMap((e) => (e.kind === "log" ? [{ atMs: e.at - start, level: e.level, message: e.message }] : [])),
    virtualMs: clock.now() - start,
  };
}

function traceCalls(journal: readonly JournalEntry[], start: number, source: ScenarioSource): TestCall[] {
  const calls = new Map<number, TestCall>();
  const update = (seq: number, fields: Partial<TestCall>): void => {
    const call = calls.get(seq);
    if (call) calls.set(seq, { ...call, ...fields });
  };
  for (const entry of journal) {
    const atMs = entry.at - start;
    switch (entry.kind) {
      case "call.scheduled": {
        const answeredBy = entry.tool.startsWith("tapedeck.") ? "builtin" : (source.answeredBy(entry.key) ?? "none");
        calls.set(entry.seq, { seq: entry.seq, tool: entry.tool, args: entry.args, atMs, answeredBy });
        break;
      }
      case "call.rejected":
        calls.set(entry.seq, { seq: entry.seq, tool: entry.tool, args: entry.args, atMs, answeredBy: "rejected", endedAtMs: atMs, error: entry.error });
        break;
      case "call.decided":
        update(entry.seq, { decision: entry.decision });
        break;
      case "call.completed":
        update(entry.seq, { endedAtMs: atMs, result: entry.result });
        break;
      case "call.failed":
        update(entry.seq, { endedAtMs: atMs, error: entry.error });
        break;
      default:
        break;
    }
  }
  return [...calls.values()].sort((a, b) => a.seq - b.seq);
}

/**
 * A run's recorded calls as a scenario document (a cassette): each call's outcome and how long
 * it took, the signals it received (sent again at the virtual time it took them), and the
 * decisions made on its calls. Holds what the journal holds, which never includes a credential.
 */
export function cassetteOf(journal: readonly JournalEntry[]): CassetteDocument {
  const started = journal[0]?.at ?? 0;
  const scheduled = new Map<number, { tool: string; args: JsonValue; at: number }>();
  const recorded: CassetteDocument["recorded"][number][] = [];
  const signals: CassetteDocument["signals"][number][] = [];
  const approvals: CassetteDocument["approvals"][number][] = [];
  for (const entry of journal) {
    if (entry.kind === "call.scheduled") scheduled.set(entry.seq, { tool: entry.tool, args: entry.args, at: entry.at });
    if (entry.kind === "call.decided") {
      const call = scheduled.get(entry.seq);
      if (!call) continue;
      approvals.push({
        tool: call.tool,
        decision: entry.decision === "approved" ? "approve" : "reject",
        ...(entry.reason === undefined ? {} : { reason: entry.reason }),
        after: entry.at - call.at,
      });
      call.at = entry.at;
    }
    if (entry.kind !== "call.completed" && entry.kind !== "call.failed") continue;
    const call = scheduled.get(entry.seq);
    if (!call) continue;
    if (call.tool === PrimitiveTool.signal && entry.kind === "call.completed") {
      const name = (call.args as { name?: string }).name ?? "";
      signals.push({ name, payload: entry.result, at: entry.at - started });
    } else if (!call.tool.startsWith("tapedeck.")) {
      const outcome = entry.kind === "call.completed" ? { result: entry.result } : { error: entry.error };
      recorded.push({ tool: call.tool, args: call.args, ...outcome, ms: entry.at - call.at });
    }
  }
  return { start: started, recorded, signals, approvals };
}

/** A cassette is a scenario document: `tapedeck test --scenario cassette.json` replays it. */
export interface CassetteDocument {
  readonly start: number;
  readonly recorded: readonly ({ readonly tool: string; readonly args: JsonValue; readonly ms: number } & (
    { readonly result: JsonValue } | { readonly error: ToolFailure }
  ))[];
  readonly signals: readonly { readonly name: string; readonly payload: JsonValue; readonly at: number }[];
  readonly approvals: readonly { readonly tool: string; readonly decision: "approve" | "reject"; readonly reason?: string; readonly after: number }[];
}
