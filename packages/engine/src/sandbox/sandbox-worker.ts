import { parentPort, workerData } from "node:worker_threads";
import * as releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import { installGuestClock } from "./guest-clock.js";
import { GuestRuntime, type GuestHost } from "./guest-runtime.js";
import { HostBugError } from "./host-bug-error.js";
import type { WasmMemory } from "./step-guard.js";
import type { ResultValues, SandboxWorkerData, WorkerMessage, WorkerRequest } from "./messages.js";
import { buildRealm, type Realm } from "./realm.js";
import { warmUp } from "./warm-up.js";
import type { Step } from "./sandbox.js";

/**
 * A sandbox worker: one WASM module, many sandboxes. Invariants:
 * - requests are handled one at a time, synchronously, in arrival order;
 * - a `HostBugError` is answered as an error; any other exception escapes and ends the worker
 *   (its WASM module may be corrupt): the main thread then rejects every pending request of its
 *   sandboxes with `SandboxLostError` and starts another worker.
 */
if (parentPort === null) throw new Error("sandbox-worker.js runs only as a worker thread.");
const port = parentPort;
const data = workerData as SandboxWorkerData;

// The package's types describe it as CommonJS, so TypeScript sees one `default` too many; at
// run time (ESM) `default` is the variant itself.
const variant = releaseSync.default as unknown as QuickJSSyncVariant;

installGuestClock();
const module = await newQuickJSWASMModuleFromVariant(variant);
// `WebAssembly.Memory` is not in Node 20's types (nor in lib ES2023): read it as what we use of it.
const memory = (module as { getWasmMemory(): WasmMemory }).getWasmMemory();
const host: GuestHost = { memory, heapLimitBytes: data.heapLimitBytes };
// Run the hot paths now: V8 tiers WASM up in the background, and a fresh module stalls (notes).
warmUp(module, host);

const sandboxes = new Map<number, GuestRuntime>();

/** One realm built ahead, so that `create` skips compiling the prelude. */
let spare: Realm | undefined = buildRealm(module);

function takeRealm(): Realm {
  const realm = spare ?? buildRealm(module);
  spare = undefined;
  return realm;
}

/**
 * Builds the next spare after answering a request other than `create`: a `create` is followed
 * at once by its `start`, while after `start` the engine usually waits for tools.
 */
function refillLater(request: WorkerRequest): void {
  if (spare !== undefined || request.type === "create") return;
  setImmediate(() => {
    spare ??= buildRealm(module);
  });
}

function sandbox(id: number): GuestRuntime {
  const found = sandboxes.get(id);
  if (found === undefined) throw new HostBugError(`Sandbox ${id} does not exist (disposed, or never created).`);
  return found;
}

function handle(request: WorkerRequest): ResultValues[WorkerRequest["type"]] {
  switch (request.type) {
    case "create":
      sandboxes.set(request.sandboxId, GuestRuntime.create(host, takeRealm(), request.options));
      return null;
    case "start":
      return sandbox(request.sandboxId).start();
    case "deliver":
      return sandbox(request.sandboxId).deliver(request.delivery);
    case "deliverEach": {
      const guest = sandbox(request.sandboxId);
      const steps: Step[] = [];
      for (const delivery of request.deliveries) {
        const step = guest.deliver(delivery);
        steps.push(step);
        if (step.end !== undefined) break;
      }
      return steps;
    }
    case "replay":
      return sandbox(request.sandboxId).replay(request.deliveries);
    case "dispose":
      sandboxes.get(request.sandboxId)?.dispose();
      sandboxes.delete(request.sandboxId);
      return null;
  }
}

function heapBytes(): number {
  return host.memory.buffer.byteLength;
}

port.on("message", (request: WorkerRequest) => {
  let outcome: Extract<WorkerMessage, { type: "result" }>["outcome"];
  try {
    outcome = { ok: true, value: handle(request) };
  } catch (error) {
    if (!(error instanceof HostBugError)) throw error;
    outcome = { ok: false, message: error.message };
  }
  const message: WorkerMessage = { type: "result", id: request.id, heapBytes: heapBytes(), outcome };
  port.postMessage(message);
  refillLater(request);
});

const ready: WorkerMessage = { type: "ready", heapBytes: heapBytes() };
port.postMessage(ready);
