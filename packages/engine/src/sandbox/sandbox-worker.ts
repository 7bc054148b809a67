import { parentPort, workerData } from "node:worker_threads";
import { installGuestClock } from "./guest-clock.js";
import { GuestRuntime, type GuestHost } from "./guest-runtime.js";
import { HostBugError } from "./host-bug-error.js";
import type { ResultValues, SandboxWorkerData, WorkerMessage, WorkerRequest } from "./messages.js";
import { buildRealm, prepareIdleRealm, type Realm } from "./realm.js";
import type { SandboxOptions, Step } from "./sandbox.js";
import { compileQuickJs } from "./sandbox-heap.js";
import { warmUp } from "./warm-up.js";
import { wallNow, WorkerWatch } from "./worker-watch.js";

/**
 * A sandbox worker: one compiled WASM module, many sandboxes, each with its own instance and heap
 * (see `sandbox-heap.ts`), restored from its snapshot for the next sandbox once freed (see
 * `realm.ts`). Invariants:
 * - requests are handled one at a time, in arrival order (creating a sandbox awaits its instance,
 *   so requests queue behind each other); the one running is in the watch, with its budget;
 * - a `HostBugError` is answered as an error; QuickJS failing under one script ends only that
 *   script (see `guest-runtime.ts`); any other exception escapes and ends the worker: the main
 *   thread then rejects every pending request of its sandboxes with `SandboxLostError` and starts
 *   another worker;
 * - a sandbox made by `run` is freed by the step that ends its script, in the same request: its
 *   main-thread handle knows it from that step and sends no `dispose`.
 */
if (parentPort === null) throw new Error("sandbox-worker.js runs only as a worker thread.");
const port = parentPort;
const data = workerData as SandboxWorkerData;
const watch = new WorkerWatch(data.watch);

/** A request's budget before its sandbox starts one of its own (creating, disposing): generous, nothing of the script runs. */
const HOST_WORK_MS = 10_000;

installGuestClock();
const compiled = compileQuickJs();
const host: GuestHost = { onBudget: (deadline) => watch.extend(deadline) };
// Run the hot paths now: V8 tiers WASM up in the background, and a fresh module stalls (notes).
await warmUp(compiled, host);

/** Live sandboxes, and whether each is freed as soon as its script ends (`run`). */
const sandboxes = new Map<number, { readonly guest: GuestRuntime; readonly freeAtEnd: boolean }>();

async function takeRealm(): Promise<Realm> {
  try {
    return await buildRealm(compiled);
  } catch (error) {
    throw new HostBugError(`The sandbox could not be created: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * After answering, while the engine reads the answer: the realm a sandbox left is restored (in
 * parts, so the next request waits for one part at most), or one is built, so that the next
 * `create` or `run` takes one ready. Not after a `create`: its `start` follows at once.
 */
let preparing = false;
function prepareLater(request: WorkerRequest): void {
  if (preparing || request.type === "create") return;
  preparing = true;
  setImmediate(() => {
    prepareIdleRealm(compiled)
      // A realm that cannot be built now fails the next `create`, which says why.
      .catch(() => {})
      .finally(() => (preparing = false));
  });
}

function sandbox(id: number): GuestRuntime {
  const found = sandboxes.get(id);
  if (found === undefined) throw new HostBugError(`Sandbox ${id} does not exist (disposed, or never created).`);
  return found.guest;
}

async function create(request: { readonly sandboxId: number; readonly options: SandboxOptions }, freeAtEnd: boolean): Promise<GuestRuntime> {
  const guest = GuestRuntime.create(host, await takeRealm(), request.options);
  sandboxes.set(request.sandboxId, { guest, freeAtEnd });
  return guest;
}

/** A step of sandbox `id`: a sandbox created by `run` is freed with the step that ends its script (its main-thread handle knows). */
function stepOf<S extends Step>(id: number, step: S): S {
  if (step.end !== undefined && sandboxes.get(id)?.freeAtEnd === true) dispose(id);
  return step;
}

function dispose(id: number): void {
  sandboxes.get(id)?.guest.dispose();
  sandboxes.delete(id);
}

async function handle(request: WorkerRequest): Promise<ResultValues[WorkerRequest["type"]]> {
  switch (request.type) {
    case "create":
      await create(request, false);
      return null;
    case "run":
      return stepOf(request.sandboxId, (await create(request, true)).start());
    case "start":
      return stepOf(request.sandboxId, sandbox(request.sandboxId).start());
    case "deliverEach": {
      const steps = sandbox(request.sandboxId).deliverEach(request.deliveries);
      const last = steps.at(-1);
      if (last !== undefined) stepOf(request.sandboxId, last);
      return steps;
    }
    case "replay":
      return stepOf(request.sandboxId, sandbox(request.sandboxId).replay(request.deliveries));
    case "dispose":
      dispose(request.sandboxId);
      return null;
  }
}

function budget(request: WorkerRequest): number {
  // `run` creates first; its script's step then starts a budget of its own.
  if (request.type === "create" || request.type === "run" || request.type === "dispose") return HOST_WORK_MS;
  return sandboxes.get(request.sandboxId)?.guest.cpuMs ?? HOST_WORK_MS;
}

async function serve(request: WorkerRequest): Promise<void> {
  watch.begin(request.id, wallNow() + budget(request));
  let outcome: Extract<WorkerMessage, { type: "result" }>["outcome"];
  try {
    outcome = { ok: true, value: await handle(request) };
  } catch (error) {
    if (!(error instanceof HostBugError)) throw error;
    outcome = { ok: false, message: error.message };
  } finally {
    watch.idle();
  }
  const message: WorkerMessage = { type: "result", id: request.id, outcome };
  port.postMessage(message);
  prepareLater(request);
}

let queue: Promise<void> = Promise.resolve();
port.on("message", (request: WorkerRequest) => {
  queue = queue
    .then(() => serve(request))
    .catch((error: unknown) => {
      // Not a host bug: the worker's state is unknown. Ending it lets the main thread start another.
      setImmediate(() => {
        throw error;
      });
    });
});

const ready: WorkerMessage = { type: "ready" };
port.postMessage(ready);
