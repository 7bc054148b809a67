import type { Delivery, ReplayStep, SandboxOptions, Step } from "./sandbox.js";

/**
 * The messages between the main thread and a sandbox worker. Invariants:
 * - every request carries an `id` unique per worker, and gets exactly one `result` with it,
 *   unless the worker dies first (then the main thread rejects it with `SandboxLostError`);
 * - the worker handles requests one at a time, in the order they were posted, and says which
 *   one it runs in its watch (`worker-watch.ts`);
 * - a `result` with `ok: false` is a host bug reported by the worker (a delivery for a seq
 *   already settled, a second `start`…): the worker and its other sandboxes stay healthy.
 */

/** What the worker needs before its first request (`workerData`). */
export interface SandboxWorkerData {
  /** The shared state the worker writes about the request it runs (see `worker-watch.ts`). */
  readonly watch: SharedArrayBuffer;
}

export type WorkerRequest =
  /** Builds a realm for a new sandbox; it runs nothing of the script yet. */
  | { readonly type: "create"; readonly id: number; readonly sandboxId: number; readonly options: SandboxOptions }
  | { readonly type: "start"; readonly id: number; readonly sandboxId: number }
  /** `create` and `start` in one round trip; the sandbox is freed by the step that ends its script. */
  | { readonly type: "run"; readonly id: number; readonly sandboxId: number; readonly options: SandboxOptions }
  | { readonly type: "deliverEach"; readonly id: number; readonly sandboxId: number; readonly deliveries: readonly Delivery[] }
  | { readonly type: "replay"; readonly id: number; readonly sandboxId: number; readonly deliveries: readonly Delivery[] }
  /** Frees the realm. Unknown ids are fine (disposing twice). */
  | { readonly type: "dispose"; readonly id: number; readonly sandboxId: number };

/** The value a successful result carries, per request type. */
export interface ResultValues {
  readonly create: null;
  readonly start: Step;
  readonly run: Step;
  readonly deliverEach: Step[];
  readonly replay: ReplayStep;
  readonly dispose: null;
}

export type WorkerMessage =
  /** The worker loaded and warmed its WASM module; sent once, before any result. */
  | { readonly type: "ready" }
  | {
      readonly type: "result";
      readonly id: number;
      readonly outcome: { readonly ok: true; readonly value: ResultValues[WorkerRequest["type"]] } | { readonly ok: false; readonly message: string };
    };
