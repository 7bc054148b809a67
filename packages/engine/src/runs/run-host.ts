import type { Decision, JsonValue, RunEnd } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { CompiledScript } from "../script/compile.js";
import type { RunRecord, RunRequest, Store } from "../store/store.js";
import type { LoadedToolset } from "../toolset/loaded-toolset.js";

/**
 * What the parts that act on runs from outside an execution need of the engine that executes
 * them: child runs (`child-runs.ts`), leases and the requests other processes leave
 * (`run-leases.ts`), credential renewals (`credential-renewal.ts`). `RunScheduler` implements it;
 * each part takes it whole, so a reader follows a call from any of them to the run it reaches
 * without going through the facade.
 *
 * Every method that acts on a run resolves once what it did is durable, and rejects only for
 * faults of the engine and for the `EngineError`s it names.
 */
export interface RunHost {
  readonly store: Store;
  readonly clock: Clock;
  /** A registered toolset, loaded. Throws `not_found`. */
  toolset(id: string): Promise<LoadedToolset>;
  /** Transpiles a script that type-checked (a workflow's). */
  compile(source: string): Promise<CompiledScript>;
  /** Starts executing a run just created, unless it executes here already; how it stops is reported to its waiters. */
  execute(run: RunRecord, toolset: LoadedToolset): void;
  /** Whether the run executes in this engine now. */
  executing(runId: string): boolean;
  /** Executes a run left `running` by an engine that stopped, unless it executes here or a live process holds it. */
  resumeStopped(run: RunRecord): Promise<void>;
  /** How a run's record says it ended, if it did. */
  recordedEnd(run: RunRecord): Promise<RunEnd | undefined>;
  /** `Engine.signal`: keeps a signal for the run and wakes it if it waits for it. */
  signal(runId: string, name: string, payload: JsonValue, options: { readonly key?: string }): Promise<unknown>;
  /** `Engine.approve` / `reject`: throws `conflict` when the call is not waiting for a decision (decided meanwhile). */
  decide(runId: string, seq: number, decision: Decision, reason: string | undefined): Promise<{ readonly heldBy?: string }>;
  /** Applies a request another process left for a run this engine holds, as if it had been made here. */
  applyRequest(runId: string, request: RunRequest): Promise<void>;
  /** Told of a fault in the background (a renewal, a lease tick); the runs are intact. */
  onError(error: unknown): void;
}
