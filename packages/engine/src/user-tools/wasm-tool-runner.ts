import createPlugin, { type CallContext, type Plugin } from "@extism/extism";
import type { JsonValue } from "@tapedeck/protocol";
import type { UserToolGrants } from "../toolset/user-tool-grants.js";
import type { UserToolLimits } from "../toolset/user-tool-limits.js";
import type { ToolDefinition } from "../library/tool-definition.js";
import { CompiledSchemas } from "./compiled-schemas.js";
import { LIMIT_EXCEEDED, ToolCallState, type UserToolCall, type UserToolOutcome } from "./user-tool-runner.js";
import type { UserTool } from "./user-tool-registration.js";

/**
 * WebAssembly user tools, run as Extism plugins (`@extism/extism`), so modules written with
 * Extism's PDKs (Rust, Go, JS, …) work: the arguments are the plugin's JSON input, its JSON
 * output the result. A fresh plugin (module instance, in a worker thread of its own) per call.
 *
 * Invariants:
 * - The module may import only Extism's kernel (`extism:host/env`) and, with an HTTP grant,
 *   `tapedeck_fetch` from `extism:host/user`; Extism's own HTTP (`allowedHosts`) and WASI are
 *   off, so the module has no other way out.
 * - `tapedeck_fetch` is the same checked path as a TypeScript tool's `fetch`: the grant (host,
 *   path prefix, method, every redirect hop), the credential only by a granted name, the limits,
 *   the sub-call journal (`{run}/{seq}.{n}`, answered from it on a replay), the leak scan.
 * - Its memory must declare a maximum within `limits.memoryBytes` (checked on the module's
 *   bytes); the wall deadline ends the call by terminating its worker.
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

const PAGE_BYTES = 65_536;
const KERNEL = "extism:host/env";
const USER = "extism:host/user";
const FETCH = "tapedeck_fetch";

/** What is wrong with a module as a tool (empty when nothing is). */
export function wasmModuleProblems(bytes: Uint8Array, entry: string, grants: UserToolGrants, limits: UserToolLimits): string[] {
  if (!Wasm.validate(bytes)) return ["wasm: it is not a valid WebAssembly module"];
  const module = new Wasm.Module(bytes);
  const problems: string[] = [];
  if (!Wasm.Module.exports(module).some((e) => e.name === entry && e.kind === "function")) problems.push(`wasm: it exports no function ${entry} (its entry)`);
  for (const imported of Wasm.Module.imports(module)) {
    if (imported.module === KERNEL) continue;
    if (imported.module === USER && imported.name === FETCH) {
      if (grants.http === undefined) problems.push(`wasm: it imports ${USER} ${FETCH}, and it has no HTTP grant (grants.http)`);
      continue;
    }
    problems.push(`wasm: it imports ${imported.module} ${imported.name}; a tool may import only Extism's kernel (${KERNEL}) and ${USER} ${FETCH}`);
  }
  const pages = memoryMaxPages(bytes);
  const allowed = Math.floor(limits.memoryBytes / PAGE_BYTES);
  if (pages === "none") problems.push(`wasm: its memory declares no maximum; declare one of at most ${allowed} pages (limits.memoryBytes)`);
  else if (pages === "imported") problems.push("wasm: it imports its memory; a tool defines its own, with a maximum");
  else if (pages !== undefined && pages > allowed) problems.push(`wasm: its memory may grow to ${pages} pages, past limits.memoryBytes (${allowed} pages)`);
  return problems;
}

export class WasmToolRunner {
  readonly #schemas = new CompiledSchemas();

  async call(tool: WasmUserTool, args: JsonValue, call: UserToolCall): Promise<UserToolOutcome> {
    // The state is the TypeScript runner's: limits, grants, journal and scans are decided in one place.
    const shape: UserTool = { ...tool, js: "", sourceMap: '{"version":3,"sources":[],"mappings":""}', groups: {}, features: [], hash: "" };
    const state = new ToolCallState(shape, call, (schema) => this.#schemas.get(schema));
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), tool.limits.deadlineMs);
    const stop = () => deadline.abort();
    call.signal.addEventListener("abort", stop, { once: true });
    let seq = 0;
    let plugin: Plugin | undefined;
    try {
      const fetch = async (context: CallContext, offset: bigint): Promise<bigint> => {
        let request: JsonValue = null;
        try {
          request = JSON.parse(context.read(offset)?.text() ?? "null") as JsonValue;
        } catch {
          return context.store(JSON.stringify({ ok: false, error: { code: "invalid_arguments", message: "tapedeck_fetch takes a JSON request block" } }));
        }
        const answer = await state.answer({ seq: ++seq, tool: "http.fetch", args: request }, deadline.signal);
        return context.store(JSON.stringify(answer.ok ? { ok: true, value: answer.value } : { ok: false, error: answer.error }));
      };
      plugin = await createPlugin(
        { wasm: [{ data: tool.module }] },
        { useWasi: false, runInWorker: true, allowedHosts: [], functions: { [USER]: { [FETCH]: fetch } } },
      );
      const running = plugin.call(tool.entry, JSON.stringify(args));
      const ended = await Promise.race([running.then((output) => ({ output })), aborted(deadline.signal)]);
      if (ended === undefined) return { result: state.timedOut(), logs: state.logs(), subCalls: state.subCalls };
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
      const message = error instanceof Error ? error.message : String(error);
      const code = /memory|grow|out of bounds/i.test(message) ? LIMIT_EXCEEDED : "tool_error";
      return failure(state, code, `${tool.definition.name} failed: ${message}`);
    } finally {
      clearTimeout(timer);
      call.signal.removeEventListener("abort", stop);
      // Terminates its worker: a call past its deadline stops here.
      await plugin?.close().catch(() => undefined);
    }
  }
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

/** The maximum pages of the module's own memory; `none` without a maximum, `imported` when it imports its memory, undefined without a memory. */
function memoryMaxPages(bytes: Uint8Array): number | "none" | "imported" | undefined {
  let at = 8;
  const u32 = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[at++]!;
      result |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result >>> 0;
      shift += 7;
    }
  };
  while (at < bytes.length) {
    const id = bytes[at++]!;
    const size = u32();
    const end = at + size;
    if (id === 2) {
      for (let count = u32(), i = 0; i < count; i++) {
        const skip = (): void => {
          const length = u32();
          at += length;
        };
        skip();
        skip();
        const kind = bytes[at++]!;
        if (kind === 2) return "imported";
        if (kind === 0) u32();
        else if (kind === 1) {
          at++;
          const flags = u32();
          u32();
          if (flags & 1) u32();
        } else if (kind === 3) at += 2;
        else return undefined;
      }
    }
    if (id === 5) {
      u32();
      const flags = u32();
      u32();
      return flags & 1 ? u32() : "none";
    }
    at = end;
  }
  return undefined;
}
