import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSSyncVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

/**
 * The heap of one sandbox. Every sandbox gets its own instance of the QuickJS WebAssembly module
 * over its own `WebAssembly.Memory`: everything its script allocates, small or large, is in that
 * memory and nowhere else, so the memory limit counts every allocation of the run and nothing of
 * its neighbours. (QuickJS's own `setMemoryLimit` cannot: compiled by Emscripten it counts about
 * 8 bytes per allocation, so many allocations of any size got past it, and one shared heap per
 * worker let a run take 8× its limit from its neighbours.)
 *
 * Invariants:
 * - the memory never grows past `limitBytes`: a growth that would is refused (the allocation
 *   fails inside QuickJS) and `refused` is set, so the host knows, from its own side, that the
 *   script went past its limit;
 * - the compiled module is shared (compiled once per worker, so V8's optimised code is shared);
 *   an instance costs 1.5–4 ms and ~0.3 MB, and is freed by the garbage collector once dropped,
 *   which is how its memory returns to the system (WASM memory never shrinks in place); an
 *   instance whose heap never grew may serve the next sandbox instead (see `reusable`), its
 *   memory first put back byte for byte as a snapshot had it (`snapshot`, `restore`).
 */

/** What we use of `WebAssembly` (not in Node 20's types, nor in lib ES2023). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmInstance {
  readonly exports: unknown;
}
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  readonly Instance: new (module: WasmModule, imports: unknown) => WasmInstance;
}
/** A compiled WebAssembly module (opaque here). */
export interface WasmModule {
  readonly __brand?: "WebAssembly.Module";
}

const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PAGE_BYTES = 64 * 1024;
/** The build's own memory: 16 MiB to start, at most WASM32's 2 GiB (what its glue would create). */
const INITIAL_PAGES = 256;
const MAXIMUM_PAGES = 32_768;
/** The smallest heap a sandbox can have: the module's initial memory, of which QuickJS itself takes about 5 MiB. */
export const MIN_SANDBOX_HEAP_BYTES = INITIAL_PAGES * PAGE_BYTES;

// The package's types describe it as CommonJS, so TypeScript sees one `default` too many; at
// run time (ESM) `default` is the variant itself.
const variant = releaseSync.default as unknown as QuickJSSyncVariant;

/** Compiles the QuickJS WebAssembly module: once per worker, shared by its sandboxes. */
export function compileQuickJs(): WasmModule {
  const path = fileURLToPath(import.meta.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
  return new wasm.Module(readFileSync(path));
}

/**
 * A heap's content at one moment, to put back with `restore`: the pages that hold something,
 * copied; the others are known to be zero. A realm's snapshot holds a few hundred KiB (QuickJS's
 * static data and the heap it has used), not the whole 16 MiB.
 */
export interface HeapSnapshot {
  readonly bytes: number;
  /** Runs of consecutive pages: their content, or `undefined` for all zeros. */
  readonly runs: readonly { readonly offset: number; readonly end: number; readonly content: Uint8Array | undefined }[];
}

const ZERO_PAGE = Buffer.alloc(PAGE_BYTES);

export class SandboxHeap {
  private limit = MAXIMUM_PAGES * PAGE_BYTES;
  /** Set when a growth past the limit was refused. */
  refused = false;
  /** The last line the module printed to stderr (Emscripten says there why it aborted). */
  lastError: string | undefined;

  /** Called when a growth is refused, during the allocation that asked for it (by the sandbox's guard). */
  onRefused: (() => void) | undefined;

  private constructor(private readonly memory: WasmMemory) {
    const grow = memory.grow.bind(memory);
    // Emscripten's glue grows the heap only through this method (its sbrk calls it when malloc
    // needs more): an own property shadows the prototype's, and the glue treats a throw as "no
    // more memory", so malloc returns NULL and QuickJS throws out of memory.
    Object.defineProperty(memory, "grow", {
      value: (pages: number): number => {
        if ((memory.buffer.byteLength / PAGE_BYTES + pages) * PAGE_BYTES > this.limit) {
          this.refused = true;
          this.onRefused?.();
          throw new RangeError("the sandbox's memory limit");
        }
        return grow(pages);
      },
    });
  }

  /** A new instance of the module over a memory of its own. */
  static async load(compiled: WasmModule): Promise<{ heap: SandboxHeap; module: QuickJSWASMModule }> {
    const memory = new wasm.Memory({ initial: INITIAL_PAGES, maximum: MAXIMUM_PAGES });
    const heap = new SandboxHeap(memory);
    const emscriptenModule = {
      wasmMemory: memory,
      // Instantiated synchronously from the compiled module (no task hop: creating a sandbox stays fast).
      instantiateWasm: (imports: unknown, receive: (instance: WasmInstance, module: WasmModule) => void): unknown => {
        const instance = new wasm.Instance(compiled, imports);
        receive(instance, compiled);
        return instance.exports;
      },
      // Emscripten prints why it aborts (a failed assertion) before throwing; kept for the error.
      printErr: (line: string) => (heap.lastError = line),
      print: () => {},
    };
    const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, { emscriptenModule }));
    return { heap, module };
  }

  /** The heap's size now, bytes. */
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** From now on the heap may hold at most `bytes` (never less than the module's initial memory). */
  limitTo(bytes: number): void {
    this.limit = Math.max(bytes, MIN_SANDBOX_HEAP_BYTES);
  }

  /**
   * Whether the instance may serve another sandbox once its runtime is freed: it never grew past
   * its initial memory (so it holds nothing more than a new one would), was never refused, and
   * its module never aborted. It is then ready as a new one would be, only faster (its pages are
   * warm): QuickJS initialises everything it hands a script, freed memory included.
   */
  get reusable(): boolean {
    return this.bytes <= MIN_SANDBOX_HEAP_BYTES && !this.refused && this.lastError === undefined;
  }

  /** The heap's content now. Only at rest (no call into the module under way). */
  snapshot(): HeapSnapshot {
    const buffer = this.memory.buffer;
    const whole = Buffer.from(buffer);
    const runs: { offset: number; end: number; content: Uint8Array | undefined }[] = [];
    for (let offset = 0; offset < buffer.byteLength; offset += PAGE_BYTES) {
      const zero = whole.compare(ZERO_PAGE, 0, PAGE_BYTES, offset, offset + PAGE_BYTES) === 0;
      const last = runs.at(-1);
      if (last !== undefined && (last.content === undefined) === zero) last.end = offset + PAGE_BYTES;
      else runs.push({ offset, end: offset + PAGE_BYTES, content: zero ? undefined : new Uint8Array(0) });
    }
    for (const run of runs) if (run.content !== undefined) run.content = new Uint8Array(buffer.slice(run.offset, run.end));
    return { bytes: buffer.byteLength, runs };
  }

  /**
   * Puts back every byte `snapshot` had: afterwards the memory is exactly what it was then, as if
   * nothing had run since. Only at rest, and only on a heap of the snapshot's size (one that grew
   * is not `reusable`).
   */
  restore(snapshot: HeapSnapshot): void {
    this.restoreRange(snapshot, 0, snapshot.bytes);
  }

  /**
   * Puts back the bytes of `[from, to)` as `snapshot` had them: `restore` in parts (ranges that
   * together cover the heap restore it). The same conditions as `restore`.
   */
  restoreRange(snapshot: HeapSnapshot, from: number, to: number): void {
    const buffer = this.memory.buffer;
    if (buffer.byteLength !== snapshot.bytes) throw new Error(`A heap of ${buffer.byteLength} bytes cannot take back a snapshot of ${snapshot.bytes}.`);
    const bytes = new Uint8Array(buffer);
    for (const run of snapshot.runs) {
      const start = Math.max(run.offset, from);
      const end = Math.min(run.end, to);
      if (start >= end) continue;
      if (run.content === undefined) bytes.fill(0, start, end);
      else bytes.set(run.content.subarray(start - run.offset, end - run.offset), start);
    }
  }

  /** Forgets the previous sandbox's limit and guard: before the instance serves another. */
  reset(): void {
    this.limit = MAXIMUM_PAGES * PAGE_BYTES;
    this.onRefused = undefined;
  }
}
