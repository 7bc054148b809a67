import type { JsonValue, SubCallAnswer } from "@tapedeck/protocol";

/**
 * Where the host calls a call makes while it runs (a sandboxed user tool's `fetch`, the tools it
 * invokes, its workspace access) are recorded, each under its own key, and found again when the
 * call is made again (a retry, a resumed run): the run's journal (`runs/run-sub-calls.ts`) for a
 * run's calls, in memory for dry runs (`MemorySubCallJournal`).
 *
 * Invariants an implementation keeps:
 * - `record` resolves once the answer is durable where the journal keeps it; a key is recorded
 *   once (a second record of it is ignored).
 * - `recorded` answers what was recorded for the key, by this attempt or an earlier one.
 */

export type { SubCallAnswer };

/** One host call: `fetch`, an invoked tool, or the workspace. */
export interface SubCall {
  /** `{run}/{seq}.{n}`: the parent call's key, then the n-th host call it made (from 1). */
  readonly key: string;
  /** `http.fetch`, `workspace.read`, or the invoked tool's `group.name`. */
  readonly tool: string;
  readonly args: JsonValue;
}

export interface SubCallJournal {
  /** The answer recorded for `key` (a replay, or a retry of the parent call), if any. */
  recorded(key: string): Promise<SubCallAnswer | undefined>;
  /**
   * Records `answer` for `call`; a replay gets exactly this. The caller acts on nothing the
   * answer leads to (a further host call, the call's result) before this resolves.
   */
  record(call: SubCall, answer: SubCallAnswer): Promise<void>;
}
