import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { HostBugError } from "./host-bug-error.js";
import { PRELUDE, PRELUDE_FILENAME } from "./prelude.js";

/**
 * A fresh QuickJS runtime and context with the prelude compiled but not yet called: the slow
 * part of creating a sandbox (compiling the prelude takes ~0.8 ms of the ~1 ms), so a worker
 * builds one ahead of time, while idle. Nothing has run in it and it has no limits yet: whoever
 * takes it configures it, and owns its three handles.
 */
export interface Realm {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  /** The prelude's function, `(configText) => internals`. */
  readonly prelude: QuickJSHandle;
}

export function buildRealm(module: QuickJSWASMModule): Realm {
  const runtime = module.newRuntime();
  const context = runtime.newContext();
  const result = context.evalCode(PRELUDE, PRELUDE_FILENAME, { type: "global" });
  if (result.error) {
    result.error.dispose();
    context.dispose();
    runtime.dispose();
    throw new Error("The sandbox prelude did not compile.");
  }
  return { runtime, context, prelude: result.value };
}

export function disposeRealm(realm: Realm): void {
  if (realm.prelude.alive) realm.prelude.dispose();
  realm.context.dispose();
  realm.runtime.dispose();
}

/** Reads name, message and stack of an error handle (errors reaching the host are QuickJS's own). */
export function readError(context: QuickJSContext, handle: QuickJSHandle): { name: string; message: string; stack?: string } {
  if (context.typeof(handle) !== "object") return { name: "Error", message: String(context.dump(handle)) };
  const read = (key: string): string | undefined => {
    const prop = context.getProp(handle, key);
    try {
      return context.typeof(prop) === "string" ? context.getString(prop) : undefined;
    } finally {
      prop.dispose();
    }
  };
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
