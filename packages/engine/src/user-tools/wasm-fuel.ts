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

/** The module as the fuel counts it: instrumented, in WebAssembly binary. Throws when Binaryen cannot read or rewrite it. */
export async function instrumentFuel(bytes: Uint8Array, fuel: number): Promise<Uint8Array> {
  const b = await binaryen();
  const module = read(b, bytes);
  try {
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

/** The part of the `WebAssembly` global used here (the engine compiles without the DOM's types). */
interface WasmCompile {
  compile(bytes: Uint8Array): Promise<object>;
}
const Wasm = (globalThis as unknown as { readonly WebAssembly: WasmCompile }).WebAssembly;

/** A compiled WebAssembly module (`WebAssembly.Module`). */
export type CompiledModule = object;

const cache = new Map<string, Promise<CompiledModule>>();
let instrumentations = 0;

/** The cache key of `bytes` instrumented for `fuel`: its content and its fuel. */
export function moduleKey(bytes: Uint8Array, fuel: number): string {
  return `${createHash("sha256").update(bytes).digest("hex")}:${fuel}`;
}

/** `bytes` instrumented for `fuel` and compiled, once per content and fuel (`key`, from `moduleKey`; most recently used kept). */
export function instrumentedModule(bytes: Uint8Array, fuel: number, key = moduleKey(bytes, fuel)): Promise<CompiledModule> {
  let module = cache.get(key);
  if (module !== undefined) {
    cache.delete(key);
    cache.set(key, module);
    return module;
  }
  instrumentations++;
  module = instrumentFuel(bytes, fuel).then((instrumented) => Wasm.compile(instrumented));
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
