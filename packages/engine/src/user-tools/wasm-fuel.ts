import { createHash } from "node:crypto";
import type BinaryenModule from "binaryen";

/**
 * Deterministic fuel for WebAssembly user tools: before a module is instantiated it is rewritten
 * (with Binaryen, the WebAssembly project's toolkit, `binaryen` on npm) so that it counts its
 * own work and stops itself, since the Extism JS runtime has no fuel of its own.
 *
 * What counts: one tick at every function entry, every loop iteration (the loop's header) and
 * every return — the points Binaryen's `log-execution` pass instruments. Straight-line code
 * between them is bounded by the module's size, so ticks bound the work. One unit of
 * `limits.fuel` is `TICKS_PER_FUEL` ticks, about as much work as one of a TypeScript tool's
 * interrupt polls (about 10,000 branches and calls).
 *
 * Invariants:
 * - The count is a mutable i64 global of the module, initialised to `fuel × TICKS_PER_FUEL`, decremented by
 *   one at each tick; when it goes below zero the module calls `extism:host/user`
 *   `FUEL_EXHAUSTED` (so the host knows the trap that follows is fuel, not the module's own
 *   `unreachable`) and traps. Nothing else decides where it stops: the same module, input and
 *   host answers stop at the same tick every time.
 * - Imported functions (Extism's kernel, the host functions) cost no ticks: the host limits
 *   those calls itself.
 * - The rewritten module is compiled once per content and fuel (`instrumentedModule`, a bounded
 *   cache keyed by the SHA-256 of the bytes): calls share the compiled module and instantiate it
 *   each time.
 */

export const TICKS_PER_FUEL = 10_000;

/** The host function the instrumented module calls when its fuel is spent (then it traps). */
export const FUEL_EXHAUSTED = "tapedeck_fuel_exhausted";

/** The host function the instrumented module calls when Extism's kernel memory would pass its budget (then it traps). */
export const KERNEL_MEMORY_EXHAUSTED = "tapedeck_kernel_memory_exhausted";

const KERNEL = "extism:host/env";

const USER = "extism:host/user";
/** The module Binaryen's pass imports its counter from; replaced by the fuel check before emitting. */
const PROBE_MODULE = "tapedeck_fuel_probe";
const CACHE_SIZE = 64;

type Binaryen = typeof BinaryenModule;

let loaded: Promise<Binaryen> | undefined;

/** Binaryen, loaded once on first use (it is large: only engines that run WebAssembly tools load it). */
export function binaryen(): Promise<Binaryen> {
  loaded ??= import("binaryen").then((m) => m.default);
  return loaded;
}

/**
 * The module as the fuel counts it: instrumented, in WebAssembly binary. Throws when Binaryen
 * cannot read or rewrite it. With `kernelBytes`, its calls of the kernel's `alloc` (Extism's
 * memory blocks, held by the host, outside the module's own memory) are counted too: they may
 * allocate `kernelBytes` in all (freed blocks still count: the bound is on what the module asks
 * for), and the one that would pass it calls `KERNEL_MEMORY_EXHAUSTED` and traps.
 */
export async function instrumentFuel(bytes: Uint8Array, fuel: number, kernelBytes?: number): Promise<Uint8Array> {
  const b = await binaryen();
  const module = read(b, bytes);
  try {
    if (kernelBytes !== undefined) boundKernelAlloc(b, module, kernelBytes);
    // The pass imports `PROBE_MODULE.log_execution(i32)` and calls it at each tick.
    b.setPassArgument("log-execution", PROBE_MODULE);
    module.runPasses(["log-execution"]);
    b.setPassArgument("log-execution", null);
    let probe: string | undefined;
    for (let i = 0; i < module.getNumFunctions(); i++) {
      const info = b.getFunctionInfo(module.getFunctionByIndex(i));
      if (info.module === PROBE_MODULE) probe = info.name;
    }
    // A module without functions of its own has nothing to count.
    if (probe !== undefined) {
      const counter = freeName((name) => module.getGlobal(name) !== 0, "tapedeck_fuel");
      const exhausted = freeName((name) => module.getFunction(name) !== 0, "tapedeck_fuel_exhausted");
      module.addGlobal(counter, b.i64, true, module.i64.const(BigInt(fuel) * BigInt(TICKS_PER_FUEL)));
      module.addFunctionImport(exhausted, USER, FUEL_EXHAUSTED, b.none, b.none);
      module.removeFunction(probe);
      const left = () => module.global.get(counter, b.i64);
      module.addFunction(
        probe,
        b.i32,
        b.none,
        [],
        module.block(null, [
          module.global.set(counter, module.i64.sub(left(), module.i64.const(1n))),
          module.if(module.i64.lt_s(left(), module.i64.const(0n)), module.block(null, [module.call(exhausted, [], b.none), module.unreachable()])),
        ]),
      );
    }
    if (module.validate() !== 1) throw new Error("the module does not validate once instrumented for fuel");
    return module.emitBinary();
  } finally {
    module.dispose();
  }
}

/** Replaces the module's import of the kernel's `alloc` with a function that counts what it asks for against `budget`, then calls the kernel's. */
function boundKernelAlloc(b: Binaryen, module: ReturnType<Binaryen["readBinary"]>, budget: number): void {
  let alloc: string | undefined;
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const info = b.getFunctionInfo(module.getFunctionByIndex(i));
    if (info.module === KERNEL && info.base === "alloc") alloc = info.name;
  }
  if (alloc === undefined) return;
  const kernel = freeName((name) => module.getFunction(name) !== 0, "tapedeck_kernel_alloc");
  const used = freeName((name) => module.getGlobal(name) !== 0, "tapedeck_kernel_bytes");
  const exhausted = freeName((name) => module.getFunction(name) !== 0, "tapedeck_kernel_memory_exhausted");
  module.removeFunction(alloc);
  module.addFunctionImport(kernel, KERNEL, "alloc", b.i64, b.i64);
  module.addFunctionImport(exhausted, USER, KERNEL_MEMORY_EXHAUSTED, b.none, b.none);
  module.addGlobal(used, b.i64, true, module.i64.const(0n));
  const total = () => module.global.get(used, b.i64);
  module.addFunction(
    alloc,
    b.i64,
    b.i64,
    [],
    module.block(
      null,
      [
        module.global.set(used, module.i64.add(total(), module.local.get(0, b.i64))),
        module.if(module.i64.gt_u(total(), module.i64.const(BigInt(budget))), module.block(null, [module.call(exhausted, [], b.none), module.unreachable()])),
        module.call(kernel, [module.local.get(0, b.i64)], b.i64),
      ],
      b.i64,
    ),
  );
}

/** The part of the `WebAssembly` global used here (the engine compiles without the DOM's types). */
interface WasmCompile {
  compile(bytes: Uint8Array): Promise<object>;
}
const Wasm = (globalThis as unknown as { readonly WebAssembly: WasmCompile }).WebAssembly;

/** A compiled WebAssembly module (`WebAssembly.Module`). */
export type CompiledModule = object;

const cache = new Map<string, Promise<CompiledModule>>();
let instrumentations = 0;

/** The cache key of `bytes` instrumented for `fuel` (and a kernel memory budget): its content and its bounds. */
export function moduleKey(bytes: Uint8Array, fuel: number, kernelBytes?: number): string {
  return `${createHash("sha256").update(bytes).digest("hex")}:${fuel}:${kernelBytes ?? "-"}`;
}

/** `bytes` instrumented for `fuel` (and `kernelBytes`) and compiled, once per content and bounds (`key`, from `moduleKey`; most recently used kept). */
export function instrumentedModule(bytes: Uint8Array, fuel: number, key = moduleKey(bytes, fuel), kernelBytes?: number): Promise<CompiledModule> {
  let module = cache.get(key);
  if (module !== undefined) {
    cache.delete(key);
    cache.set(key, module);
    return module;
  }
  instrumentations++;
  module = instrumentFuel(bytes, fuel, kernelBytes).then((instrumented) => Wasm.compile(instrumented));
  module.catch(() => cache.delete(key));
  cache.set(key, module);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return module;
}

/** How many modules the cache has instrumented since the process started (tests: a module is not instrumented per call). */
export function instrumentedCount(): number {
  return instrumentations;
}

/**
 * The maximum pages of the module's own memory, read by Binaryen: `none` without a maximum,
 * `imported` when it imports its memory, undefined without a memory.
 */
export async function declaredMemoryPages(bytes: Uint8Array): Promise<number | "none" | "imported" | undefined> {
  const b = await binaryen();
  const module = read(b, bytes);
  try {
    if (!module.hasMemory()) return undefined;
    const memory = module.getMemoryInfo();
    if (memory.module !== null && memory.module !== "") return "imported";
    return memory.max ?? "none";
  } finally {
    module.dispose();
  }
}

/**
 * `bytes` read with the features Node 20's V8 runs (what Rust, Go and C compilers emit for
 * wasm32): a module using others (Wasm GC, memory64, the new exception handling) is refused at
 * registration; with more enabled, Binaryen would also write encodings V8 cannot read.
 */
function read(b: Binaryen, bytes: Uint8Array): ReturnType<Binaryen["readBinary"]> {
  const F = b.Features;
  const features =
    F.Atomics |
    F.MutableGlobals |
    F.NontrappingFPToInt |
    F.SIMD128 |
    F.BulkMemory |
    F.BulkMemoryOpt |
    F.SignExt |
    F.TailCall |
    F.ReferenceTypes |
    F.Multivalue |
    F.CallIndirectOverlong;
  // binaryen's typings name readBinaryWithFeatures, which its build does not export: its readBinary takes the features second.
  const module = (b.readBinary as (data: Uint8Array, features: number) => ReturnType<Binaryen["readBinary"]>)(bytes, features);
  return module;
}

function freeName(taken: (name: string) => boolean, base: string): string {
  let name = base;
  for (let n = 2; taken(name); n++) name = `${base}_${n}`;
  return name;
}
