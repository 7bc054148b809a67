import type { ToolFailure } from "./failure.js";
import type { JsonValue } from "./json.js";
import type { JsonSchema } from "./toolset.js";

/**
 * Sandboxed user tools as a toolset file declares them and a toolset pins them (issue 15): a
 * tool written in TypeScript, run in a fresh QuickJS sandbox per call, with no capability
 * unless granted. Its code, grants and limits are pinned with the toolset, so they are part of
 * its content address: changing a grant gives a new toolset, and running runs keep theirs.
 */

/** Where a user tool's `fetch` may go: a host, a path prefix under it, methods. */
export interface UserToolHttpGrant {
  /** A host as the `http` allow-list writes it: `api.example.com`, `*.example.com`. */
  readonly host: string;
  /** Requests must be under this path (whole segments: `/v1/` never grants `/v10`). Default `/`. */
  readonly pathPrefix?: string;
  /** Methods allowed. Default GET only. */
  readonly methods?: readonly string[];
}

/** What a user tool may reach. Nothing unless granted. */
export interface UserToolGrantsSpec {
  /** Where `fetch` may go; absent: the tool has no `fetch` at all. */
  readonly http?: readonly UserToolHttpGrant[];
  /** Vault credentials the tool may name in `fetch(url, { credential: "NAME" })`: injected after the checks, never seen by the tool. */
  readonly secrets?: readonly string[];
  /** The namespace's workspace: `ro` (`workspace.read`, `workspace.list`) or `rw` (and `workspace.write`). Absent: none. */
  readonly workspace?: "ro" | "rw";
  /** Other tools of the toolset it may call, written `group.name`. Absent: none. */
  readonly tools?: readonly string[];
}

/** Limits of one call. Every field has a default (fuel 500 interrupt polls for TypeScript, 50,000 units for WebAssembly, 30 s, 16 MiB, 256 KiB stack, 50 requests, 20 invocations, 1,000 lines of 4 KiB). */
export interface UserToolLimitsSpec {
  readonly fuel?: number;
  readonly deadlineMs?: number;
  readonly memoryBytes?: number;
  readonly stackBytes?: number;
  readonly httpRequests?: number;
  readonly toolCalls?: number;
  readonly logLines?: number;
  readonly logLineChars?: number;
}

/** A user tool in a toolset file: `"userTools": { "<group>": { "<name>": { … } } }`. */
export interface UserToolFileSpec {
  readonly description?: string;
  /** TypeScript: an ES module whose default export takes the arguments and returns the result (or a promise of it). Or `wasm`. */
  readonly code?: string;
  /**
   * Instead of `code`: a WebAssembly module, base64, run as an Extism plugin (its PDKs: Rust, Go,
   * JS, …): `entry` (default `run`) takes the arguments as JSON input and sets the result as JSON
   * output. Its memory must declare a maximum within `limits.memoryBytes`; with an HTTP grant it
   * may import `tapedeck_fetch` from `extism:host/user` (a JSON request block in, a JSON answer out).
   */
  readonly wasm?: string;
  /** The exported function a `wasm` tool runs. Default `run`. */
  readonly entry?: string;
  /** Default `{ "type": "object" }`. */
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly grants?: UserToolGrantsSpec;
  readonly limits?: UserToolLimitsSpec;
}

/** A user tool as a toolset pins it (`PinnedTool.user`): its code, its normalised grants and every limit. */
export interface PinnedUserTool {
  /** TypeScript (a `code` tool). */
  readonly code?: string;
  /** A WebAssembly tool: its module (base64) and the function it runs. */
  readonly wasm?: { readonly module: string; readonly entry: string };
  readonly grants: UserToolGrantsSpec;
  readonly limits: Required<UserToolLimitsSpec>;
  /**
   * Saved by `save_tool` (a model's or a tenant's), not registered in a toolset file: a later save
   * may replace it, never a tool the toolset's author registered (whose policy would not carry
   * over). Set only by `save_tool`; a toolset file cannot write it.
   */
  readonly saved?: true;
}

/** A host call of a user tool as the run's journal records it (`call.sub`): what the tool was given, already leak-scanned, and when. */
export type SubCallAnswer = ({ readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: ToolFailure }) & { readonly at: number };
