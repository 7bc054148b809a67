import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { HostBugError } from "./host-bug-error.js";
import { PRELUDE, PRELUDE_FILENAME } from "./prelude.js";
import { SandboxHeap, type WasmModule } from "./sandbox-heap.js";

/**
 * A fresh sandbox: its own instance of the QuickJS module over its own heap (new, or one a freed
 * sandbox left that never grew), a runtime and a context with the prelude compiled but not yet called. Building one is the slow part of creating
 * a sandbox (~1.4 ms for the instance, ~0.8 ms to compile the prelude), so a worker builds one
 * ahead of time, while idle. Nothing has run in it and it has no limits yet: whoever takes it
 * configures it, and owns its handles.
 */
export interface Realm {
  readonly heap: SandboxHeap;
  readonly module: QuickJSWASMModule;
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  /** The prelude's function, `(configText) => internals`. */
  readonly prelude: QuickJSHandle;
}

/** Instances whose sandbox was freed and whose heap never grew: the next realms' (per worker). */
const idle: { readonly heap: SandboxHeap; readonly module: QuickJSWASMModule }[] = [];
/** A few are enough for sandboxes created one after another; more would only hold memory. */
const MAX_IDLE_INSTANCES = 4;

export async function buildRealm(compiled: WasmModule): Promise<Realm> {
  const { heap, module } = idle.pop() ?? (await SandboxHeap.load(compiled));
  const runtime = module.newRuntime();
  const context = runtime.newContext();
  const result = context.evalCode(PRELUDE, PRELUDE_FILENAME, { type: "global" });
  if (result.error) {
    result.error.dispose();
    context.dispose();
    runtime.dispose();
    throw new Error("The sandbox prelude did not compile.");
  }
  return { heap, module, runtime, context, prelude: result.value };
}

/**
 * Frees the realm's handles, context and runtime. The module instance and its heap are freed with
 * them by the garbage collector; a module that aborted (a QuickJS assertion) throws here, and is
 * simply dropped: nothing outside its own memory was touched.
 */
export function disposeRealm(realm: Realm): void {
  try {
    if (realm.prelude.alive) realm.prelude.dispose();
    if (realm.context.alive) realm.context.dispose();
    if (realm.runtime.alive) realm.runtime.dispose();
  } catch {
    // An aborted module: see above.
    return;
  }
  if (!realm.heap.reusable || idle.length >= MAX_IDLE_INSTANCES) return;
  realm.heap.reset();
  idle.push({ heap: realm.heap, module: realm.module });
}

/**
 * Reads name, message and stack of an error handle (errors reaching the host are QuickJS's own).
 * Never throws: a property that cannot be read (a Proxy whose traps throw) reads as missing.
 */
export function readError(context: QuickJSContext, handle: QuickJSHandle): { name: string; message: string; stack?: string } {
  const read = (key: string): string | undefined => {
    try {
      const prop = context.getProp(handle, key);
      try {
        return context.typeof(prop) === "string" ? context.getString(prop) : undefined;
      } finally {
        prop.dispose();
      }
    } catch {
      return undefined;
    }
  };
  try {
    if (context.typeof(handle) !== "object") return { name: "Error", message: String(context.dump(handle)) };
  } catch {
    return { name: "Error", message: "(a value that cannot be read)" };
  }
  const stack = read("stack");
  return { name: read("name") ?? "Error", message: read("message") ?? "", ...(stack === undefined ? {} : { stack }) };
}

/** The value of a setup call, or a `HostBugError` saying why the sandbox could not be set up. */
export function expectValue(context: QuickJSContext, result: { value?: QuickJSHandle; error?: QuickJSHandle }): QuickJSHandle {
  if (result.error !== undefined) {
    const error = readError(context, result.error);
    result.error.dispose();
    throw new HostBugError(`The sandbox could not be set up (check the limits): ${error.name}: ${error.message}`);
  }
  if (result.value === undefined) throw new HostBugError("The sandbox could not be set up: no value.");
  return result.value;
}
