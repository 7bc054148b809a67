import type { JSModuleLoader, QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { HostBugError } from "./host-bug-error.js";
import { PRELUDE, PRELUDE_FILENAME } from "./prelude.js";
import { SandboxHeap, type HeapSnapshot, type WasmModule } from "./sandbox-heap.js";

/**
 * A fresh sandbox: its own instance of the QuickJS module over its own heap, a runtime and a
 * context with the prelude compiled but not yet called. Nothing has run in it and it has no
 * limits yet: whoever takes it configures it, and owns its handles until `disposeRealm`.
 *
 * Building one costs milliseconds (~1.5 ms for the instance, ~1–2 ms to compile the prelude), so
 * each is built once: right after it is built, its heap is snapshotted (`HeapSnapshot`), and when
 * its sandbox is freed the heap is put back byte for byte — runtime, context, prelude, allocator,
 * the zeros above — so the next sandbox gets exactly the realm a new build would give, in a
 * fraction of a millisecond. Invariants:
 * - a realm is handed out only in its snapshot's state: nothing a sandbox leaves (globals,
 *   modules, freed memory, QuickJS's counters) is seen by the next;
 * - the JavaScript side of quickjs-emscripten holds nothing a sandbox changes: the runtime's
 *   interrupt handler and module loader are installed once, before the snapshot, and call
 *   `interrupt` and `loadModule`, which each sandbox sets (so the C side's "enabled" flags, which
 *   the restore puts back, always agree with them); handles a sandbox took are never used after
 *   the restore;
 * - a heap that grew, was refused, or whose module aborted is never restored: it is dropped (its
 *   size or its state is not the snapshot's).
 */
export interface Realm {
  readonly heap: SandboxHeap;
  readonly module: QuickJSWASMModule;
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  /** The prelude's function, `(configText) => internals`. */
  readonly prelude: QuickJSHandle;
  /** What the runtime's interrupt handler answers: the sandbox's guard. */
  interrupt: () => boolean;
  /** The runtime's module loader: the sandbox's. */
  loadModule: JSModuleLoader;
}

const NEVER = (): boolean => false;
const NO_MODULES: JSModuleLoader = (name) => ({ error: new Error(`No module ${name} here.`) });

/** A realm with its snapshot, in the idle pool or lent to a sandbox. */
class PooledRealm implements Realm {
  interrupt: () => boolean = NEVER;
  loadModule: JSModuleLoader = NO_MODULES;
  /** How far the heap is back in its snapshot's state: all of it unless a sandbox used it since. */
  #restoredTo: number;
  readonly snapshot: HeapSnapshot;

  constructor(
    readonly heap: SandboxHeap,
    readonly module: QuickJSWASMModule,
    readonly runtime: QuickJSRuntime,
    readonly context: QuickJSContext,
    readonly prelude: QuickJSHandle,
  ) {
    runtime.setInterruptHandler(() => this.interrupt());
    runtime.setModuleLoader((name, loading) => this.loadModule(name, loading));
    // Last: everything above is part of what every sandbox starts from.
    this.snapshot = heap.snapshot();
    this.#restoredTo = this.snapshot.bytes;
  }

  /** Freed by its sandbox and not yet (all) restored. */
  get dirty(): boolean {
    return this.#restoredTo < this.snapshot.bytes;
  }

  /** Its sandbox freed it: all of the heap is to be restored. */
  used(): void {
    this.#restoredTo = 0;
  }

  /** Back to the snapshot's state (the rest of it, if part was restored already). */
  restore(): this {
    this.restoreSome(this.snapshot.bytes);
    return this;
  }

  /** Restores at most `bytes` more of the heap, from where the last part ended. */
  restoreSome(bytes: number): void {
    if (!this.dirty) return;
    const to = Math.min(this.#restoredTo + bytes, this.snapshot.bytes);
    this.heap.restoreRange(this.snapshot, this.#restoredTo, to);
    this.#restoredTo = to;
  }
}

/**
 * How much of an idle realm's heap a worker restores before it looks at its messages again:
 * about 30 µs of work (zeroing runs at ~100 MB/ms here), against ~0.2 ms for the whole 16 MiB, so
 * a request arriving meanwhile waits for one part at most, not for the whole restore.
 */
const RESTORE_PART_BYTES = 2 * 1024 * 1024;

/** Realms whose sandbox was freed: the next sandboxes' (per worker). */
const idle: PooledRealm[] = [];
/** A few are enough for sandboxes created one after another; more would only hold memory. */
const MAX_IDLE_REALMS = 4;

/** A realm in its snapshot's state: an idle one restored, or a new one. */
export async function buildRealm(compiled: WasmModule): Promise<Realm> {
  return idle.pop()?.restore() ?? (await newRealm(compiled));
}

async function newRealm(compiled: WasmModule): Promise<PooledRealm> {
  const { heap, module } = await SandboxHeap.load(compiled);
  const runtime = module.newRuntime();
  const context = runtime.newContext();
  const result = context.evalCode(PRELUDE, PRELUDE_FILENAME, { type: "global" });
  if (result.error) {
    result.error.dispose();
    context.dispose();
    runtime.dispose();
    throw new Error("The sandbox prelude did not compile.");
  }
  return new PooledRealm(heap, module, runtime, context, result.value);
}

/**
 * What a worker does when it has nothing else to do: restores the idle realms sandboxes left, in
 * parts with a turn of the event loop between them (a request that arrives meanwhile is served
 * first; a realm it takes is restored in full as it is taken, and this no longer touches it),
 * and builds one when none is idle, so that the next sandbox is created without waiting.
 */
export async function prepareIdleRealm(compiled: WasmModule): Promise<void> {
  for (let realm = idle.find((r) => r.dirty); realm !== undefined; realm = idle.find((r) => r.dirty)) {
    realm.restoreSome(RESTORE_PART_BYTES);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (idle.length === 0) idle.push(await newRealm(compiled));
}

/**
 * Gives the realm back once its sandbox is done: to the idle pool (restored later, or when
 * taken), or dropped when its heap cannot be restored or the pool is full. The sandbox must not
 * touch it again; its handles need not be freed (the restore frees everything).
 */
export function disposeRealm(realm: Realm): void {
  realm.interrupt = NEVER;
  realm.loadModule = NO_MODULES;
  if (!(realm instanceof PooledRealm) || !realm.heap.reusable || idle.length >= MAX_IDLE_REALMS) return;
  realm.heap.reset();
  realm.used();
  idle.push(realm);
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
