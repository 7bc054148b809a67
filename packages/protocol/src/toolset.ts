import type { JsonObject, JsonValue } from "./json.js";
import type { RunBudget } from "./run-budget.js";
import type { PinnedUserTool, UserToolFileSpec } from "./user-tool.js";

/** A JSON Schema, as a tool declares it. */
export type JsonSchema = JsonObject | boolean;

/** What happens to a call that was interrupted (engine died, connection dropped, worker lost). */
export type OnInterruption = "retry" | "at_most_once";

/**
 * A test on one part of a call's arguments, named by a JSON pointer (RFC 6901): the one shape of
 * a toolset's approval rules (`when`) and direct tools' approval policies (`args`).
 */
export type ArgumentTest =
  /** The value there is JSON-equal to `equals` (same type and value; object keys in any order). */
  | { readonly pointer: string; readonly equals: JsonValue }
  /** The value there is JSON-equal to one of `oneOf`. */
  | { readonly pointer: string; readonly oneOf: readonly JsonValue[] }
  /**
   * The value there is a string in which the regular expression `matches` finds a match
   * (JavaScript syntax, run by a linear-time engine: no backreferences or lookaround; `flags`
   * among i, m, s, u).
   */
  | { readonly pointer: string; readonly matches: string; readonly flags?: string }
  /** `present: true`: there is a value there; `false`: there is none. */
  | { readonly pointer: string; readonly present: boolean };

/** One rule of a tool's approval. */
export interface ApprovalRule {
  readonly action: "deny" | "ask" | "allow";
  /** A glob over `group.name` (`*` is any run of characters): the rule applies to the tools it matches. Default: every tool. */
  readonly tool?: string;
  /** Every test must hold. Default: none (the rule matches every call of its tools). */
  readonly when?: readonly ArgumentTest[];
  /** Why, for whoever approves (ask) or for the model (deny): "Writes Rust source files". */
  readonly reason: string;
  /** What the approver sees: `{/pointer}` is replaced by that argument ("Write {/path}"); cut at 200 characters. */
  readonly summary?: string;
}

/** An approval without rules: what `otherwise` may be. */
export type PlainApproval =
  /** Sent without asking. */
  | { readonly kind: "never" }
  /** Asked for, unless the harness auto-approved the tool (IronClaw's `UnlessAutoApproved`). */
  | { readonly kind: "unless_auto_approved"; readonly reason: string }
  /** Asked for every time, whatever the harness auto-approved. */
  | { readonly kind: "always"; readonly reason: string };

/**
 * Approval of a tool's calls as data, the same for every kind of tool (the one tool contract):
 * plain, or rules over the arguments evaluated deny → ask → allow, `otherwise` when none matches.
 */
export type ToolApproval =
  | PlainApproval
  /** Decided by `rules` over the tool's name and arguments; `otherwise` when none matches. */
  | { readonly kind: "rules"; readonly rules: readonly ApprovalRule[]; readonly otherwise: PlainApproval };

/** A tool's rate limit: a sliding window per (namespace, tool), kept in the store. */
export interface ToolRateLimit {
  /** Calls per sliding minute per (namespace, tool). */
  readonly perMinute?: number;
  /** Calls per sliding hour per (namespace, tool). */
  readonly perHour?: number;
  /** Past the limit: `fail` (default) with `rate_limited` and `retryAfter`, or `wait` (a durable sleep until the window frees). */
  readonly onLimit?: "fail" | "wait";
}

/** A tool's policy as written in a toolset file. Durations are strings ("30s", "5m") or ms. */
export interface PolicySpec {
  /** `retry` (default): send again with the same key, ≤ 5 attempts. `at_most_once`: fail with `outcomeUnknown`. */
  readonly onInterruption?: OnInterruption;
  /**
   * How long one attempt may take once it is sent. Default 5 minutes for MCP tools and built-ins;
   * none for host tools, whose claimed call is governed by its heartbeat (a host tool's timeout,
   * when set, counts from when a worker takes the call, never while it waits for one).
   */
  readonly timeout?: string | number;
  /** How long a host tool's worker may go without a heartbeat. Default 60 s. */
  readonly heartbeatTimeout?: string | number;
  /**
   * Host tools only: how long an attempt may wait for a worker to take it. Past it the call fails
   * with `queue_timeout` (nothing was sent, so calling again is safe). Default: no limit (the
   * call waits for a worker as long as the run lives).
   */
  readonly queueTimeout?: string | number;
  /** Calls of this tool in flight per run. Default: the run's limit, 16. */
  readonly concurrency?: number;
  /**
   * Calls wait for approval before being sent: `true` every call, `false` none (default, or the
   * tool's own default for a library tool), or rules over the arguments with a reason each:
   * `{ "kind": "rules", "rules": [{ "action": "ask", "when": [{ "pointer": "/path", "matches": "\\.(rs|toml)$" }], "reason": "Writes Rust sources" }], "otherwise": { "kind": "never" } }`.
   */
  readonly approval?: boolean | ToolApproval;
  /** How much harm a call can do (`low`, `medium`, `high`): a default for approval policies, never a permission. */
  readonly risk?: "low" | "medium" | "high";
  /** Calls per sliding minute and hour per (namespace, tool), checked before approval. Default: none (a library tool's own). */
  readonly rateLimit?: ToolRateLimit;
  /**
   * JSON pointers into the arguments whose values are secret (`["/password", "/card/number"]`):
   * the journal, events, webhooks, traces, cassettes and approvals show a keyed hash of each
   * (`"[redacted hmac-sha256:…]"`), the tool receives the real value. Added to the tool's own and
   * to `group.*`'s (a pointer is never taken away by a narrower policy).
   */
  readonly sensitiveParams?: readonly string[];
}

/** A host tool as declared in a toolset file. */
export interface HostToolSpec {
  readonly description?: string;
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
}

/** Options every MCP server entry of a toolset file may have (seed 002). */
export interface McpServerOptions {
  /** Prepended to every tool name of this server (the server still gets the original name). */
  readonly prefix?: string;
  /** A server that cannot be listed at registration registers no tools (one warning) instead of failing. */
  readonly optional?: boolean;
  /** Per-attempt timeout of this server's calls, ms. Default 5 minutes. */
  readonly callTimeoutMs?: number;
  /** How Tapedeck introduces itself to the server. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** An MCP server over Streamable HTTP. Header values may reference the environment: `${GITHUB_TOKEN}`. */
export interface McpHttpServerSpec extends McpServerOptions {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The name of a vault credential sent on every call (over the recipe's headers), resolved per
   * run (run → end user → toolset, like `fetch`'s `credential`) and bound to the URL's host. A
   * 401 to it parks the call until it is renewed. Registration lists tools with `headers`.
   */
  readonly credential?: string;
}

/** An MCP server over stdio. Env values may reference Tapedeck's environment: `${GITHUB_TOKEN}`. */
export interface McpStdioServerSpec extends McpServerOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export type McpServerSpec = McpHttpServerSpec | McpStdioServerSpec;

/**
 * The built-in `http` tool as a toolset file enables it: scripts then have `fetch`, and each
 * request is a journaled call of `http.fetch`. Without it there is no `fetch` and no network.
 */
export interface HttpSpec {
  /**
   * Hosts requests may go to: names (`api.github.com`), names with a first label of `*` that
   * matches exactly one label (`*.example.com`), and IP literals (`203.0.113.7`, `[2001:db8::1]`).
   * A host that is allowed but resolves to (or is) a private, loopback, link-local, metadata or
   * other refused address is still refused.
   */
  readonly allow: readonly string[];
}

/**
 * The groups of the built-in tool library a toolset enables, each with its options:
 * `{ "time": {}, "files": { "mode": "rw" }, "shell": {}, "memory": {}, "web": {}, "json": {}, "echo": {} }`.
 * Groups: echo, time, json, web (its requests follow the toolset's `http` allow-list), files and
 * shell (in a workspace per namespace), memory (documents with full-text search, per namespace).
 * Options: `files.mode` `rw` (default) or `ro`; the other groups take none yet.
 */
export interface LibrarySpec {
  readonly [group: string]: JsonObject;
}

/** A toolset file. */
export interface ToolsetSpec {
  /**
   * Derives this toolset from a registered one: its tools and servers, as pinned, plus what this
   * spec adds (new groups; policies for the new tools).
   */
  readonly base?: string;
  /** MCP servers by group, in the shape MCP hosts use. */
  readonly mcpServers?: { readonly [group: string]: McpServerSpec };
  /** Host tools by group, then by name. */
  readonly hostTools?: { readonly [group: string]: { readonly [name: string]: HostToolSpec } };
  /** Enables the built-in `http` tool (`fetch` in scripts) for these hosts. */
  readonly http?: HttpSpec;
  /** Enables groups of the built-in tool library (`files.read(…)` in scripts). */
  readonly library?: LibrarySpec;
  /** Sandboxed user tools by group, then by name (see `user-tool.ts`). */
  readonly userTools?: { readonly [group: string]: { readonly [name: string]: UserToolFileSpec } };
  /** Policies by `group.name` (or `group.*` for a whole group). */
  readonly policies?: { readonly [tool: string]: PolicySpec };
  /** Each run's budget on this toolset (a start may give its own): past it the run fails `budget_exceeded`. Default: the engine's. */
  readonly budget?: RunBudget;
}

/** A policy with every default applied. Durations in ms. */
export interface ToolPolicy {
  readonly onInterruption: OnInterruption;
  /** Absent: no attempt timeout (host tools by default). A host tool's counts from when a worker takes the call. */
  readonly timeoutMs?: number;
  readonly heartbeatTimeoutMs: number;
  /** Host tools: how long an attempt may wait for a worker; absent, as long as the run lives. */
  readonly queueTimeoutMs?: number;
  readonly concurrency: number;
  /** Every call waits for approval (`approvalRules`, when present, decides instead). */
  readonly approval: boolean;
  /** Approval decided per call from its arguments, each rule with the reason the approver is shown. */
  readonly approvalRules?: ToolApproval;
  /** The tool's rate limit, checked before approval. */
  readonly rateLimit?: ToolRateLimit;
  /** JSON pointers into the arguments whose values are redacted wherever calls are recorded or shown, sorted and unique; absent when none. */
  readonly sensitiveParams?: readonly string[];
}

/** Where a tool's calls go. */
export type ToolSourceKind = "host" | "mcp" | "builtin" | "library" | "user";

/** A tool as a toolset pins it: everything a run needs to call it, for the run's whole life. */
export interface PinnedTool {
  /** The group the script imports (`github` in `github.list_issues`). */
  readonly group: string;
  /** The tool's name as its source defines it. */
  readonly name: string;
  readonly source: ToolSourceKind;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly policy: ToolPolicy;
  /** A default for approval policies: `low` (read-only), `medium`, `high` (destructive). From MCP annotations. */
  readonly risk?: "low" | "medium" | "high";
  /** MCP annotations, as the server declared them (hints, never permissions). */
  readonly annotations?: JsonObject;
  /** For a tool of an MCP server: which server, and the tool's name there (before any prefix). */
  readonly remote?: { readonly server: string; readonly name: string };
  /** For the built-in `http.fetch` (and the library's `web.fetch`): the normalised allow-list of the toolset's `http` entry. */
  readonly http?: { readonly allow: readonly string[] };
  /**
   * For a tool of the built-in library (source `library`): its group's options as the toolset
   * gave them, and how it opens the namespace's workspace (files, shell), if it does.
   */
  readonly library?: { readonly options: JsonObject; readonly workspace?: "rw" | "ro" };
  /** For a sandboxed user tool (source `user`): its code, grants and limits. */
  readonly user?: PinnedUserTool;
}

/**
 * How to reach an MCP server, as a toolset pins it. Credentials are never part of it.
 * `addresses: "public"`: the server is reached only at public addresses, checked at every
 * connection — set when a key limited to a namespace or labels registered it (never from the
 * toolset file); without it, any address (the operator's servers). See docs/design/mcp-addresses.md.
 */
export type McpServerRecipe = (
  | { readonly url: string; readonly headers?: Readonly<Record<string, string>>; readonly credential?: string; readonly addresses?: "public" }
  | { readonly command: string; readonly args: readonly string[]; readonly env?: Readonly<Record<string, string>>; readonly cwd?: string }
) & { readonly clientInfo?: { readonly name: string; readonly version: string } };

/**
 * A workflow a toolset pins: a saved script that scripts start as a child run with
 * `workflows.<name>.start(input)` and wait for with `result()` (see docs/design/workflows.md).
 * It was type-checked against the toolset it was saved on, and runs on the toolset that pins it.
 */
export interface PinnedWorkflow {
  /** What it does, for whoever starts it (the doc comment of its declaration). */
  readonly description: string;
  /** Its TypeScript; the default export takes `input` and returns `output`. */
  readonly source: string;
  /** JSON Schema of the input `start(input)` takes: checked before the child run is created. */
  readonly input: JsonSchema;
  /** JSON Schema of the output `result()` resolves with: checked when the child completes. */
  readonly output: JsonSchema;
  /** The signals it waits for, each with the JSON Schema of its payload. */
  readonly signals?: { readonly [signal: string]: JsonSchema };
}

/** A registered toolset. Its id is `ts_` + SHA-256 of the canonical JSON of `tools` (and of `base`, `servers`, `workflows` when it has them). */
export interface PinnedToolset {
  readonly id: string;
  /** The toolset this one was derived from. */
  readonly base?: string;
  readonly tools: readonly PinnedTool[];
  /** MCP servers by recipe id (`PinnedTool.remote.server`). */
  readonly servers?: { readonly [id: string]: McpServerRecipe };
  /** Workflows by name (an identifier): `workflows.<name>` in scripts. A derived toolset keeps its base's. */
  readonly workflows?: { readonly [name: string]: PinnedWorkflow };
  /** Each run's budget (`ToolsetSpec.budget`); a derived toolset keeps its base's unless it gives one. */
  readonly budget?: RunBudget;
}

/** `group.name`, the form a tool is named by in the journal and in errors. */
export function toolPath(tool: { readonly group: string; readonly name: string }): string {
  return `${tool.group}.${tool.name}`;
}
