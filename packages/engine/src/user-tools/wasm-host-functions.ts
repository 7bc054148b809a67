import type { CallContext } from "@extism/extism";
import type { JsonValue } from "@tapedeck/protocol";
import type { UserToolGrants } from "../toolset/user-tool-grants.js";
import { FUEL_EXHAUSTED, KERNEL_MEMORY_EXHAUSTED } from "./wasm-fuel.js";
import type { HostFunction } from "./wasm-spare-plugins.js";
import type { ToolCallState } from "./user-tool-runner.js";

/**
 * The host functions a WebAssembly user tool imports from `extism:host/user`: each takes the
 * offset of an Extism memory block holding a JSON request and returns the offset of a block
 * holding the JSON answer, `{ "ok": true, "value": … }` or `{ "ok": false, "error": { "code",
 * "message", … } }` (a tool error, like a TypeScript tool's `ToolError`):
 *
 * - `tapedeck_fetch`: `http.fetch`'s arguments (`{ url, method?, headers?, body?, credential? }`);
 *   the value is `http.fetch`'s (`{ status, headers, body, url, redirected }`).
 * - `tapedeck_invoke`: `{ "tool": "group.name", "args": {…} }`, a tool of `grants.tools`; the
 *   value is its result.
 * - `tapedeck_workspace`: `{ "op": "read" | "list" | "write", "args": {…} }` (`write` only with
 *   `rw`), the arguments and value of the workspace tools a TypeScript tool imports.
 *
 * Invariants:
 * - Each request is the call's next host call (n in `{run}/{seq}.{n}`, in issue order: the module
 *   is blocked while its host call runs, so issue order is its program order) answered by
 *   `ToolCallState.answer`, the TypeScript runner's own path: grant, limit, recorded answer or
 *   performed and recorded, leak scan. Nothing here decides a grant.
 * - A request that is not JSON, or not of its function's shape, is answered with
 *   `invalid_arguments` and is no host call (nothing is journaled for it).
 * - A module imports only the host functions its grants offer (`hostFunctionGrant`, checked at
 *   registration); `FUEL_EXHAUSTED` is the fuel instrumentation's, never the module's own.
 */

export const USER_MODULE = "extism:host/user";

/** The host functions by import name, and the grant each needs. */
const GRANT_OF = new Map<string, { readonly grant: keyof UserToolGrants; readonly what: string }>([
  ["tapedeck_fetch", { grant: "http", what: "HTTP grant" }],
  ["tapedeck_invoke", { grant: "tools", what: "tool granted" }],
  ["tapedeck_workspace", { grant: "workspace", what: "workspace grant" }],
]);

/** Why the module may not import `name` from `extism:host/user` with `grants` (undefined: it may). */
export function hostFunctionProblem(name: string, grants: UserToolGrants): string | undefined {
  const needs = GRANT_OF.get(name);
  if (needs === undefined) return `it imports ${USER_MODULE} ${name}, which is no host function (there are ${[...GRANT_OF.keys()].join(", ")})`;
  const granted = grants[needs.grant];
  if (granted === undefined || (Array.isArray(granted) && granted.length === 0))
    return `it imports ${USER_MODULE} ${name}, and it has no ${needs.what} (grants.${needs.grant})`;
  return undefined;
}

/** Every function of `USER_MODULE` a plugin offers (a module imports those its grants allow). */
export const HOST_FUNCTION_NAMES: readonly string[] = [...GRANT_OF.keys(), FUEL_EXHAUSTED, KERNEL_MEMORY_EXHAUSTED];

/** One call's host functions (and the fuel probe), answering through `state`; `fuelSpent` says whether the module ran out of fuel. */
export function hostFunctions(
  state: ToolCallState,
  deadline: AbortSignal,
): { readonly functions: Record<string, HostFunction>; readonly fuelSpent: () => boolean; readonly kernelMemorySpent: () => boolean } {
  let seq = 0;
  let spent = false;
  let kernelSpent = false;
  const answer = async (context: CallContext, tool: string, args: JsonValue): Promise<bigint> => {
    const answered = await state.answer({ seq: ++seq, tool, args }, deadline);
    // The call is over and its worker terminated: an answer written now would wait for the worker
    // to read it for ever (and keep Extism's timer, and the process, alive). Thrown, it ends Extism's wait.
    if (deadline.aborted) throw new Error("the call was stopped before its host call was answered");
    return context.store(JSON.stringify(answered.ok ? { ok: true, value: answered.value } : { ok: false, error: answered.error }));
  };
  const invalid = (context: CallContext, message: string): bigint =>
    context.store(JSON.stringify({ ok: false, error: { code: "invalid_arguments", message } }));
  const request = (context: CallContext, offset: bigint): JsonValue | undefined => {
    try {
      return JSON.parse(context.read(offset)?.text() ?? "") as JsonValue;
    } catch {
      return undefined;
    }
  };
  const named = (value: JsonValue | undefined, field: "tool" | "op"): { readonly name: string; readonly args: JsonValue } | undefined => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const name = value[field];
    return typeof name === "string" && name !== "" ? { name, args: value.args ?? {} } : undefined;
  };
  const functions: Record<string, HostFunction> = {
    tapedeck_fetch: (context, offset) => {
      const args = request(context, offset);
      if (args === undefined)
        return invalid(context, "tapedeck_fetch takes a block of JSON: http.fetch's arguments, { url, method?, headers?, body?, credential? }");
      return answer(context, "http.fetch", args);
    },
    tapedeck_invoke: (context, offset) => {
      const call = named(request(context, offset), "tool");
      if (call === undefined) return invalid(context, 'tapedeck_invoke takes a block of JSON: { "tool": "group.name", "args": { … } }');
      return answer(context, call.name, call.args);
    },
    tapedeck_workspace: (context, offset) => {
      const call = named(request(context, offset), "op");
      if (call === undefined) return invalid(context, 'tapedeck_workspace takes a block of JSON: { "op": "read" | "list" | "write", "args": { … } }');
      return answer(context, `workspace.${call.name}`, call.args);
    },
    [FUEL_EXHAUSTED]: () => {
      spent = true;
      return 0n;
    },
    [KERNEL_MEMORY_EXHAUSTED]: () => {
      kernelSpent = true;
      return 0n;
    },
  };
  return { functions, fuelSpent: () => spent, kernelMemorySpent: () => kernelSpent };
}
