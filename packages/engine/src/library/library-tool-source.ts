import Database from "better-sqlite3";
import { existsSync, mkdirSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { toolFailure, type HttpSpec, type JsonValue, type LibrarySpec, type PinnedTool, type PolicySpec } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { callLibraryTool } from "./call-library-tool.js";
import { Workspace } from "./files/workspace.js";
import { LIBRARY_GROUP_NAMES, libraryGroupTools, type LibraryGroupName, type LibraryHost } from "./library-groups.js";
import type { Capabilities, LibraryTool, ToolContext } from "./library-tool.js";
import type { Embedder } from "./memory/embeddings.js";
import { MemorySpace } from "./memory/memory-space.js";
import { SqliteMemoryStore } from "./memory/sqlite-memory-store.js";
import { pinLibraryTools, type LibraryPinning } from "./pin-library.js";
import { probeShell, type ShellProbe } from "./shell/shell-probe.js";
import type { FetchedResponse, GuardedFetch } from "./web/guarded-fetch.js";
import { HtmlConversionPool } from "./web/html-conversion-pool.js";
import type { HtmlConverter } from "./web/html-converter.js";
import type { Store } from "../store/store.js";
import { pinHttpTool } from "../toolset/pin-http.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "../sources/tool-source.js";
import type { LibraryPlace } from "../toolset/library-spec-file.js";
import { LIBRARY_DATA_GROUPS } from "./library-data.js";
import { memoryDatabase, noLibraryFolder, workspaceFolder } from "./library-folder.js";
import { compactDatabase } from "../store/sqlite-erase-store.js";

/**
 * The `library` tool source: runs the built-in library's tools (`library/`) for a run's calls,
 * in this process, after the dispatcher journaled them — so each call has its idempotency key,
 * its result is recorded, and a replay answers it from the journal without running it again.
 *
 * Invariants:
 * - A tool's context holds only the capabilities it names (`needs`): the namespace's workspace
 *   (opened `ro` when the toolset pinned it so), a fetch through the `http` tool source with the
 *   toolset's allow-list, the namespace's memory. A run's namespace is read from the store once.
 * - Time is the engine's clock (`ctx.now`): virtual in `test_script` and virtual-time engines.
 * - `web.fetch` sends its request as an `http.fetch` attempt of the same call (its idempotency
 *   key and trace context), through an `HttpToolSource` without credentials: web pages are read
 *   as anyone reads them, and no credential can leak into a page's Markdown. Its pages are
 *   converted by the `html` converter (worker threads), never on this event loop.
 * - Never rejects (`ToolSource.call`); a tool this engine cannot serve (no library folder, no
 *   bubblewrap) is said before a run starts (`check`), and again as the call's failure.
 */

export interface LibrarySourceOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** Where workspaces and the memory index live (see `library-folder.ts`); absent: files, shell and memory cannot be served. */
  readonly folder?: string;
  /** Sends `web.fetch`'s requests: the `http` tool's rules (an `HttpToolSource`, or a test's scenario). */
  readonly http: ToolSource;
  /** `close()` closes `http` too (the engine's own). Default false. */
  readonly ownsHttp?: boolean;
  /** Memory search by meaning too (an OpenAI-compatible embeddings endpoint). Default: full-text only. */
  readonly embedder?: Embedder;
  /** Whether shell commands can be sandboxed here. Default: `probeShell()`, once, when first needed. */
  readonly shell?: () => Promise<ShellProbe>;
  /** Converts web.fetch's pages; not closed by `close()`. Default: an `HtmlConversionPool` of its own, started when first needed and closed with the source. */
  readonly html?: HtmlConverter;
}

export class LibraryToolSource implements ToolSource, LibraryPlace, LibraryPinning {
  readonly #options: LibrarySourceOptions;
  #shell: Promise<ShellProbe> | undefined;
  /** What the probe said, once it answered: `check` is synchronous. */
  #shellKnown: ShellProbe | undefined;
  readonly #namespaces = new Map<string, Promise<string | undefined>>();
  readonly #groups = new Map<string, Promise<readonly LibraryTool[] | string>>();
  #memory: { readonly db: Database.Database; readonly store: SqliteMemoryStore } | undefined;
  /** The converter this source made (absent until a page needs one), closed with it. */
  #ownHtml: HtmlConversionPool | undefined;

  constructor(options: LibrarySourceOptions) {
    this.#options = options;
  }

  noFolder(group: string): string | undefined {
    return LIBRARY_DATA_GROUPS.has(group) && this.#options.folder === undefined ? noLibraryFolder(group) : undefined;
  }

  /** The toolset's `library` groups as pinned tools (`pin-library.ts`). */
  pin(library: LibrarySpec, http: HttpSpec | undefined, policies: Readonly<Record<string, PolicySpec>>): Promise<PinnedTool[]> {
    return pinLibraryTools(library, http, policies, this);
  }

  async host(): Promise<LibraryHost> {
    return { shell: await this.#probe(), embeddings: this.#options.embedder !== undefined };
  }

  check(tools: readonly PinnedTool[]): string | undefined {
    for (const tool of tools) {
      if (tool.source !== "library") continue;
      const folder = this.noFolder(tool.group);
      if (folder !== undefined) return `The toolset enables the library's ${tool.group} group, but ${folder}.`;
      if (tool.group === "shell" && this.#shellKnown?.ok === false) return `The toolset enables the library's shell group, but ${this.#shellKnown.reason}`;
    }
    return undefined;
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    const { tool } = request;
    const found = await this.#tool(tool);
    if (typeof found === "string") return { kind: "failure", failure: toolFailure("unknown_tool", found) };
    const ctx = await this.#context(found, request);
    if ("failure" in ctx) return { kind: "failure", failure: ctx.failure };
    const outcome = await callLibraryTool(found, request.args, ctx);
    return outcome.kind === "result" ? { kind: "result", value: outcome.value } : { kind: "failure", failure: outcome.failure };
  }

  /** The converter web.fetch's pages go through: the one given, else this source's own. Another source may share it (`test_script`'s). */
  get html(): HtmlConverter {
    return this.#options.html ?? (this.#ownHtml ??= new HtmlConversionPool());
  }

  async close(): Promise<void> {
    await this.#ownHtml?.close();
    this.#ownHtml = undefined;
    this.#memory?.db.close();
    this.#memory = undefined;
    if (this.#options.ownsHttp === true) await this.#options.http.close?.();
  }

  /**
   * Deletes what the library keeps of `namespace` (an end user's erasure): its workspace folder
   * whole, and its memory documents with their chunks and index, then compacts the memory
   * database (VACUUM, WAL truncated) so that their bytes are in none of its files. Resolves
   * with what it deleted; nothing when this source has no folder.
   */
  async eraseNamespace(namespace: string): Promise<{ readonly memoryDocuments: number; readonly workspaceFiles: number; readonly compacted: boolean }> {
    const folder = this.#options.folder;
    if (folder === undefined) return { memoryDocuments: 0, workspaceFiles: 0, compacted: true };
    const workspace = workspaceFolder(folder, namespace);
    const workspaceFiles = await countFiles(workspace);
    await rm(workspace, { recursive: true, force: true });
    if (!existsSync(memoryDatabase(folder))) return { memoryDocuments: 0, workspaceFiles, compacted: true };
    const memoryDocuments = await this.#memoryStore(folder).eraseNamespace(namespace);
    return { memoryDocuments, workspaceFiles, compacted: compactDatabase(this.#memory!.db) };
  }

  /** What `eraseNamespace` would delete now (the dry run). */
  async countNamespace(namespace: string): Promise<{ readonly memoryDocuments: number; readonly workspaceFiles: number }> {
    const folder = this.#options.folder;
    if (folder === undefined) return { memoryDocuments: 0, workspaceFiles: 0 };
    const workspaceFiles = await countFiles(workspaceFolder(folder, namespace));
    if (!existsSync(memoryDatabase(folder))) return { memoryDocuments: 0, workspaceFiles };
    return { memoryDocuments: (await this.#memoryStore(folder).list(namespace, "", Number.MAX_SAFE_INTEGER)).length, workspaceFiles };
  }

  #probe(): Promise<ShellProbe> {
    this.#shell ??= (this.#options.shell ?? (() => probeShell()))().then((probe) => (this.#shellKnown = probe));
    return this.#shell;
  }

  /** The library tool a pinned tool names, from its group made with the options the toolset pinned. */
  async #tool(tool: PinnedTool): Promise<LibraryTool | string> {
    const group = tool.group;
    if (!(LIBRARY_GROUP_NAMES as readonly string[]).includes(group)) return `The tool library has no group ${group}.`;
    const options = tool.library?.options ?? {};
    const key = `${group} ${JSON.stringify(options)}`;
    let tools = this.#groups.get(key);
    if (tools === undefined) {
      tools = (async () => {
        const made = libraryGroupTools(group as LibraryGroupName, options as never, await this.host());
        return made.ok ? made.tools : `The library's ${group} group cannot be served by this engine: ${made.reason}`;
      })();
      this.#groups.set(key, tools);
    }
    const offered = await tools;
    if (typeof offered === "string") return offered;
    return offered.find((t) => t.name === tool.name) ?? `The library's ${group} group has no tool ${tool.name} in this version of Tapedeck.`;
  }

  /** The context `tool` runs in: the clock and signal, and only the capabilities it needs. */
  async #context(tool: LibraryTool, request: ToolCallRequest): Promise<ToolContext<keyof Capabilities> | { readonly failure: ReturnType<typeof toolFailure> }> {
    const base = { now: () => this.#options.clock.now(), signal: request.signal };
    const folder = this.#options.folder;
    const capabilities: Partial<Record<keyof Capabilities, unknown>> = {};
    for (const need of tool.needs) {
      if (need === "fetch") {
        capabilities.fetch = this.#fetch(request);
        continue;
      }
      if (need === "html") {
        capabilities.html = this.html;
        continue;
      }
      if (folder === undefined)
        return { failure: toolFailure("tool_error", `${request.tool.group}.${request.tool.name} cannot run: ${noLibraryFolder(request.tool.group)}.`) };
      try {
        const namespace = await this.#namespace(request.runId);
        if (need === "workspace") capabilities.workspace = await Workspace.open(workspaceFolder(folder, namespace), request.tool.library?.workspace ?? "rw");
        else capabilities.memory = new MemorySpace(this.#memoryStore(folder), namespace ?? "", this.#options.embedder);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return { failure: toolFailure("tool_error", `${request.tool.group}.${request.tool.name} could not open its ${need}: ${why}`, { retryable: true }) };
      }
    }
    return { ...base, ...capabilities } as ToolContext<keyof Capabilities>;
  }

  #namespace(runId: string): Promise<string | undefined> {
    let namespace = this.#namespaces.get(runId);
    if (namespace === undefined) {
      namespace = this.#options.store.getRun(runId).then((run) => run?.namespace);
      this.#namespaces.set(runId, namespace);
    }
    return namespace;
  }

  #memoryStore(folder: string): SqliteMemoryStore {
    if (this.#memory === undefined) {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      const db = new Database(memoryDatabase(folder));
      db.pragma("busy_timeout = 10000");
      db.pragma("journal_mode = WAL");
      this.#memory = { db, store: new SqliteMemoryStore(db) };
    }
    return this.#memory.store;
  }

  /** `web.fetch`'s requests: an `http.fetch` attempt of the same call, with the allow-list the toolset pinned on the tool. */
  #fetch(call: ToolCallRequest): GuardedFetch {
    const httpTool: PinnedTool = { ...pinHttpTool(call.tool.http?.allow ?? [], {}), policy: call.tool.policy };
    return async (request, signal) => {
      const args: JsonValue = { url: request.url, method: request.method, headers: { ...request.headers } };
      const outcome = await this.#options.http.call({ ...call, tool: httpTool, args, signal });
      switch (outcome.kind) {
        case "result":
          return { kind: "result", response: outcome.value as unknown as FetchedResponse };
        case "failure":
          return { kind: "failure", failure: outcome.failure };
        case "interrupted":
          return {
            kind: "failure",
            failure: toolFailure("network_error", `The request to ${request.url} got no answer: ${outcome.reason}.`, { retryable: true }),
          };
        case "park":
          return { kind: "failure", failure: toolFailure("refused", outcome.park.message) };
      }
    };
  }
}

/** Files under `dir` (0 when it does not exist), for an erasure's counts. */
async function countFiles(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  return entries.filter((entry) => !entry.isDirectory()).length;
}
