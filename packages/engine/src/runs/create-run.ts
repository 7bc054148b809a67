import type { JournalEntry, JsonValue, RunBudget } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { CompiledScript } from "../script/compile.js";
import type { RunCaller, RunRecord, Store } from "../store/store.js";
import { newRunId } from "../util/ids.js";
import { REPLAY_VERSION } from "./history.js";

/**
 * Creating a run: its record and its first journal entry (`run.started`, with the replay
 * version this engine writes), in one commit. Every run is created here, whoever starts it (a
 * harness's `start` or `fork`, a workflow call's child); starting to execute it is the
 * scheduler's (`RunScheduler.execute`).
 *
 * Invariants:
 * - A run is created whole or not at all: its record and `run.started` are one commit.
 * - With an idempotency key a run of the namespace has already, nothing is written and that run
 *   is the answer (`duplicate`), even when two creations race.
 */

/** What a new run is made of; everything else a run record holds is the store's or the executor's. */
export interface RunSpec {
  readonly toolsetId: string;
  /** The TypeScript, as written (the model's, or a workflow's). */
  readonly source: string;
  /** The JavaScript the sandbox runs, and its source map. */
  readonly compiled: CompiledScript;
  readonly input: JsonValue;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** The run a fork was made from. */
  readonly parentId?: string;
  /** The workflow call that started this run, for a child run. */
  readonly caller?: RunCaller;
  readonly idempotencyKey?: string;
  /** When the run is cancelled if it has not ended: at a time (ms since the epoch: a child's, its caller's), or this long after it is created (a TTL). */
  readonly expires?: { readonly at: number } | { readonly afterMs: number };
  /** W3C trace context its calls join (checked by the caller). */
  readonly traceparent?: string;
  /** The start's budget (checked by the caller): journaled in `run.started`, so every execution holds the run to it. */
  readonly budget?: RunBudget;
}

export type CreatedRun =
  /** Created, `running`: ready to execute. */
  | { readonly kind: "created"; readonly run: RunRecord }
  /** The idempotency key names a run of the namespace already: nothing was created. */
  | { readonly kind: "duplicate"; readonly runId: string };

export async function createRun(store: Store, clock: Clock, spec: RunSpec): Promise<CreatedRun> {
  const now = clock.now();
  const id = newRunId(now);
  const traceparent = spec.traceparent === undefined ? {} : { traceparent: spec.traceparent };
  const budget = spec.budget === undefined ? {} : { budget: spec.budget };
  const started: JournalEntry = { index: 0, at: now, kind: "run.started", input: spec.input, replayVersion: REPLAY_VERSION, ...traceparent, ...budget };
  const created = await store.createRun(
    {
      id,
      toolsetId: spec.toolsetId,
      source: spec.source,
      js: spec.compiled.js,
      sourceMap: spec.compiled.sourceMap,
      input: spec.input,
      status: "running",
      createdAt: now,
      ...(spec.labels ? { labels: spec.labels } : {}),
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.parentId ? { parentId: spec.parentId } : {}),
      ...(spec.caller ? { caller: spec.caller } : {}),
      ...(spec.idempotencyKey === undefined ? {} : { idempotencyKey: spec.idempotencyKey }),
      ...(spec.expires === undefined ? {} : { expiresAt: "at" in spec.expires ? spec.expires.at : now + spec.expires.afterMs }),
    },
    [started],
  );
  if (created.kind === "duplicate") return { kind: "duplicate", runId: created.runId };
  const run = await store.getRun(id);
  if (!run) throw new Error(`run ${id} vanished after it was created`);
  return { kind: "created", run };
}
