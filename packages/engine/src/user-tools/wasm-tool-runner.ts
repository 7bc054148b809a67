import type { Plugin } from "@extism/extism";
import type { JsonValue } from "@tapedeck/protocol";
import type { LogLine } from "../sandbox/sandbox.js";
import type { UserToolGrants } from "../toolset/user-tool-grants.js";
import type { UserToolLimits } from "../toolset/user-tool-limits.js";
import type { ToolDefinition } from "../library/tool-definition.js";
import { CompiledSchemas } from "./compiled-schemas.js";
import { LIMIT_EXCEEDED, ToolCallState, type UserToolCall, type UserToolOutcome } from "./user-tool-runner.js";
import { userToolOf } from "./user-tool-registration.js";
import { HOST_FUNCTION_NAMES, hostFunctionProblem, hostFunctions, USER_MODULE } from "./wasm-host-functions.js";
import { declaredMemoryPages, instrumentedModule, moduleKey, TICKS_PER_FUEL, type CompiledModule } from "./wasm-fuel.js";
import { SparePlugins } from "./wasm-spare-plugins.js";

/**
 * WebAssembly user tools, run as Extism plugins (`@extism/extism`), so modules written with
 * Extism's PDKs (Rust, Go, JS, …) work: the arguments are the plugin's JSON input, its JSON
 * output the result. A fresh plugin (module instance, in a worker thread of its own) per call,
 * of a module compiled once (instrumented for fuel, `wasm-fuel.ts`), started ahead of the call
 * (`wasm-spare-plugins.ts`).
 *
 * Invariants:
 * - The module may import only Extism's kernel (`extism:host/env`) and the host functions of
 *   `extism:host/user` its grants offer (`wasm-host-functions.ts`: `tapedeck_fetch` with `http`,
 *   `tapedeck_invoke` with `tools`, `tapedeck_workspace` with `workspace`); Extism's own HTTP
 *   (`allowedHosts`) and WASI are off, so the module has no other way out.
 * - Every host call is the TypeScript runner's (`ToolCallState`): the grants (host, path prefix,
 *   method, every redirect hop; a credential only by a granted name, injected by the host; the
 *   workspace as granted; only the granted tools), the per-call limits, the sub-call journal
 *   (`{run}/{seq}.{n}`, answered from it on a replay), the leak scan. The module's log lines
 *   (Extism's `log_*`) are kept as a TypeScript tool's `console` lines: at most `logLines`, each
 *   cut at `logLineChars`, leak-scanned.
 * - Fuel is deterministic (`wasm-fuel.ts`): the call stops at the same tick every time, with
 *   `limit_exceeded`. Its memory must declare a maximum within `limits.memoryBytes` (checked on
 *   the module's bytes); the wall deadline ends the call by terminating its worker.
 */

/** A WebAssembly user tool, ready to run. */
export interface WasmUserTool {
  readonly definition: ToolDefinition;
  readonly grants: UserToolGrants;
  readonly limits: UserToolLimits;
  readonly module: Uint8Array;
  readonly entry: string;
}

/** The part of the `WebAssembly` global used here (the engine compiles without the DOM's types). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  readonly Module: {
    new (bytes: Uint8Array): object;
    exports(module: object): readonly { readonly name: string; readonly kind: string }[];
    imports(module: object): readonly { readonly module: string; readonly name: string; readonly kind: string }[];
  };
}
const Wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly;

type LogLevel = LogLine["level"];

const PAGE_BYTES = 65_536;
const KERNEL = "extism:host/env";
const NO_CODE = { js: "", sourceMap: '{"version":3,"sources":[],"mappings":""}' };
const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** What is wrong with a module as a tool (empty when nothing is). */
export async function wasmModuleProblems(bytes: Uint8Array, entry: string, grants: UserToolGrants, limits: UserToolLimits): Promise<string[]> {
  if (!Wasm.validate(bytes)) return ["wasm: it is not a valid WebAssembly module"];
  const module = new Wasm.Module(bytes);
  const problems: string[] = [];
  if (!Wasm.Module.exports(module).some((e) => e.name === entry && e.kind === "function")) problems.push(`wasm: it exports no function ${entry} (its entry)`);
  for (const imported of Wasm.Module.imports(module)) {
    if (imported.module === KERNEL) continue;
    if (imported.module === USER_MODULE) {
      const problem = hostFunctionProblem(imported.name, grants);
      if (problem !== undefined) problems.push(`wasm: ${problem}`);
      continue;
    }
    problems.push(
      `wasm: it imports ${imported.module} ${imported.name}; a tool may import only Extism's kernel (${KERNEL}) and the host functions of ${USER_MODULE}`,
    );
  }
  const pages = await declaredMemoryPages(bytes);
  const allowed = Math.floor(limits.memoryBytes / PAGE_BYTES);
  if (pages === "none") problems.push(`wasm: its memory declares no maximum; declare one of at most ${allowed} pages (limits.memoryBytes)`);
  else if (pages === "imported") problems.push("wasm: it imports its memory; a tool defines its own, with a maximum");
  else if (pages !== undefined && pages > allowed) problems.push(`wasm: its memory may grow to ${pages} pages, past limits.memoryBytes (${allowed} pages)`);
  if (problems.length > 0) return problems;
  try {
    // Instrumented and compiled now (and cached for its calls): a module that cannot be is refused here, not at each call.
    const kernelBytes = limits.memoryBytes - (typeof pages === "number" ? pages : 0) * PAGE_BYTES;
    await instrumentedModule(bytes, limits.fuel, moduleKey(bytes, limits.fuel, kernelBytes), kernelBytes);
  } catch (error) {
    problems.push(`wasm: it cannot be instrumented for fuel: ${error instanceof Error ? error.message : String(error)}`);
  }
  return problems;
}

export class WasmToolRunner {
  readonly #schemas = new CompiledSchemas();
  readonly #spares = new SparePlugins();

  /** Closes the spare plugins (their workers). */
  close(): Promise<void> {
    return this.#spares.close();
  }

  async call(tool: WasmUserTool, args: JsonValue, call: UserToolCall): Promise<UserToolOutcome> {
    // The state is the TypeScript runner's: limits, grants, journal and scans are decided in one place.
    const state = new ToolCallState(userToolOf(tool.definition, "", tool.grants, tool.limits, NO_CODE), call, (schema) => this.#schemas.get(schema));
    let module: CompiledModule;
    let key: string;
    let kernelBytes: number;
    try {
      // Extism's kernel memory (its blocks, outside the module's own memory) counts against limits.memoryBytes with the module's declared memory.
      const pages = await declaredMemoryPages(tool.module);
      kernelBytes = tool.limits.memoryBytes - (typeof pages === "number" ? pages : 0) * PAGE_BYTES;
      key = moduleKey(tool.module, tool.limits.fuel, kernelBytes);
      // Before the deadline starts: instrumenting is the engine's work (once per module and process, seconds for a large one), not the tool's.
      module = await instrumentedModule(tool.module, tool.limits.fuel, key, kernelBytes);
    } catch (error) {
      return failure(
        state,
        "tool_error",
        `${tool.definition.name} could not be instrumented for fuel: ${error instanceof Error ? error.message : String(error)}.`,
      );
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), tool.limits.deadlineMs);
    const stop = () => deadline.abort();
    call.signal.addEventListener("abort", stop, { once: true });
    const host = hostFunctions(state, deadline.signal);
    let plugin: Plugin | undefined;
    try {
      plugin = await this.#spares.take(key, module, USER_MODULE, HOST_FUNCTION_NAMES, { functions: host.functions, logger: logger(state, tool.limits) });
      // Settled either way, so that a call rejected after its deadline (a host call answered late) is not an unhandled rejection.
      const running = plugin.call(tool.entry, JSON.stringify(args)).then(
        (output) => ({ output }),
        (error: unknown) => ({ error }),
      );
      const ended = await Promise.race([running, aborted(deadline.signal)]);
      if (ended === undefined) return { result: state.timedOut(), logs: state.logs(), subCalls: state.subCalls };
      if ("error" in ended) throw ended.error;
      const text = ended.output?.text() ?? "null";
      let value: JsonValue;
      try {
        value = JSON.parse(text) as JsonValue;
      } catch {
        return failure(
          state,
          "tool_error",
          `${tool.definition.name} set an output that is not JSON (its first characters: ${JSON.stringify(text.slice(0, 80))}).`,
        );
      }
      return { result: state.output(value), logs: state.logs(), subCalls: state.subCalls };
    } catch (error) {
      if (host.kernelMemorySpent()) {
        return failure(
          state,
          LIMIT_EXCEEDED,
          `${tool.definition.name} asked Extism's kernel for more than ${kernelBytes} bytes of memory blocks in one call: limits.memoryBytes (${tool.limits.memoryBytes}) less its own memory's declared maximum. ` +
            "Allocate fewer and smaller blocks (inputs, outputs, variables), or register the tool with a larger limits.memoryBytes.",
        );
      }
      if (host.fuelSpent()) {
        const fuel = tool.limits.fuel;
        return failure(
          state,
          LIMIT_EXCEEDED,
          `${tool.definition.name} used all its fuel (${fuel} units: ${fuel * TICKS_PER_FUEL} function entries, loop iterations and returns): it stops at the same point every time. ` +
            "Do less work per call (smaller inputs, fewer iterations), or ask for a larger fuel limit (limits.fuel).",
        );
      }
      const message = error instanceof Error ? error.message : String(error);
      // The module's own error (Extism's error_set) is its failure, whatever it says; a trap on memory is the limit.
      const code = !message.startsWith("Plugin-originated error") && /memory|grow|out of bounds/i.test(message) ? LIMIT_EXCEEDED : "tool_error";
      return failure(state, code, `${tool.definition.name} failed: ${message}`);
    } finally {
      clearTimeout(timer);
      call.signal.removeEventListener("abort", stop);
      // Terminates its worker: a call past its deadline stops here.
      await plugin?.close().catch(() => undefined);
    }
  }
}

/** The plugin's logger: Extism's `log_*` lines kept as the call's log lines, each cut at `logLineChars`. */
function logger(state: ToolCallState, limits: UserToolLimits): Console {
  let ordinal = 0;
  const line = (level: LogLevel) => (text: unknown) => {
    let message = String(text);
    if (message.length > limits.logLineChars)
      message = `${message.slice(0, limits.logLineChars)}… [cut: ${message.length - limits.logLineChars} more characters]`;
    state.absorb([{ level, message, ordinal: ordinal++ }]);
  };
  return Object.fromEntries(LEVELS.map((level) => [level, line(level)])) as unknown as Console;
}

function failure(state: ToolCallState, code: string, message: string): UserToolOutcome {
  return { result: { kind: "failure", failure: state.scanFailure({ code, message }) }, logs: state.logs(), subCalls: state.subCalls };
}

function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}
