import { parentPort, workerData } from "node:worker_threads";
import { installGuestClock } from "./guest-clock.js";
import { GuestRuntime, type GuestHost } from "./guest-runtime.js";
import { HostBugError } from "./host-bug-error.js";
import type { ResultValues, SandboxWorkerData, WorkerMessage, WorkerRequest } from "./messages.js";
import { buildRealm, type Realm } from "./realm.js";
import { compileQuickJs } from "./sandbox-heap.js";
import { warmUp } from "./warm-up.js";
import { wallNow, WorkerWatch } from "./worker-watch.js";

/**
 * A sandbox worker: one compiled WASM module, many sandboxes, each with its own instance and heap
 * (see `sandbox-heap.ts`). Invariants:
 * - requests are handled one at a time, in arrival order (creating a sandbox awaits its instance,
 *   so requests queue behind each other); the one running is in the watch, with its budget;
 * - a `HostBugError` is answered as an error; QuickJS failing under one script ends only that
 *   script (see `guest-runtime.ts`); any other exception escapes and ends the worker: the main
 *   thread then rejects every pending request of its sandboxes with `SandboxLostError` and starts
 *   another worker.
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

const sandboxes = new Map<number, GuestRuntime>();

/** One sandbox built ahead, so that `create` skips instantiating the module and compiling the prelude. */
let spare: Promise<Realm> | undefined = buildSpare();

function buildSpare(): Promise<Realm> {
  const building = buildRealm(compiled);
  // Awaited when taken; a failure then fails that `create`.
  building.catch(() => {});
  return building;
}

async function takeRealm(): Promise<Realm> {
  const realm = spare ?? buildRealm(compiled);
  spare = undefined;
  try {
    return await realm;
  } catch (error) {
    throw new HostBugError(`The sandbox could not be created: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Builds the next spare after answering a request other than `create`: a `create` is followed
 * at once by its `start`, while after `start` the engine usually waits for tools.
 */
function refillLater(request: WorkerRequest): void {
  if (spare !== undefined || request.type === "create") return;
  setImmediate(() => {
    spare ??= buildSpare();
  });
}

function sandbox(id: number): GuestRuntime {
  const found = sandboxes.get(id);
  if (found === undefined) throw new HostBugError(`Sandbox ${id} does not exist (disposed, or never created).`);
  return found;
}

async function handle(request: WorkerRequest): Promise<ResultValues[WorkerRequest["type"]]> {
  switch (request.type) {
    case "create":
      sandboxes.set(request.sandboxId, GuestRuntime.create(host, await takeRealm(), request.options));
      return null;
    case "start":
      return sandbox(request.sandboxId).start();
    case "deliverEach":
      return sandbox(request.sandboxId).deliverEach(request.deliveries);
    case "replay":
      return sandbox(request.sandboxId).replay(request.deliveries);
    case "dispose":
      sandboxes.get(request.sandboxId)?.dispose();
      sandboxes.delete(request.sandboxId);
      return null;
  }
}

function budget(request: WorkerRequest): number {
  if (request.type === "create" || request.type === "dispose") return HOST_WORK_MS;
  return sandboxes.get(request.sandboxId)?.cpuMs ?? HOST_WORK_MS;
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
  refillLater(request);
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
