import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { JournalEntry, JsonSchema, JsonValue, PinnedTool, PinnedToolset, ToolSourceKind } from "@tapedeck/protocol";
import { systemClock, type Clock } from "./clock.js";
import { EngineError } from "./errors.js";
import {
  LOG_LINE_CHARS,
  MAX_ATTEMPTS,
  MAX_JOURNAL_ENTRIES,
  MAX_VALUE_BYTES,
  RUN_CONCURRENCY,
  SANDBOX_CPU_MS_PER_STEP,
  SANDBOX_MEMORY_BYTES,
  SANDBOX_STACK_BYTES,
} from "./limits.js";
import { ArgsValidator } from "./runs/args-validator.js";
import { endRecord, REPLAY_VERSION, RunExecutor, type ExecutorLimits, type LoadedToolset, type RunEnd } from "./runs/run-executor.js";
import { verifyReplay, type VerifyResult } from "./runs/verify-replay.js";
import { QuickJsSandboxFactory } from "./sandbox/quickjs-sandbox-factory.js";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import type { ScriptChecker } from "./script/checker.js";
import type { CheckResult, Diagnostic } from "./script/diagnostic.js";
import { InProcessHostTools, type HostToolModule } from "./sources/in-process-host-tools.js";
import { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
import { SourceRouter } from "./sources/source-router.js";
import type { ToolSource } from "./sources/tool-source.js";
import { SqliteStore } from "./store/sqlite-store.js";
import type { Durability, RunQuery, RunRecord, Store } from "./store/store.js";
import { renderDeclarations, type Declarations } from "./toolset/declarations.js";
import { mergeShapes, shapeOf } from "./toolset/observed-shape.js";
import { pinToolset } from "./toolset/pin.js";
import type { McpOverride } from "./toolset/pin-mcp.js";
import { canonicalJson } from "./util/canonical-json.js";
import { parseToolsetSpec, ToolsetSpecError } from "./toolset/toolset-file.js";
import { newRunId } from "./util/ids.js";

/**
 * The engine: registers toolsets, checks scripts, starts, executes and resumes runs. Everything
 * the CLI and the server do goes through here. It knows nothing of HTTP.
 */

/** Limits of runs; every field has a default (see `limits.ts` for why). */
export type EngineLimits = ExecutorLimits;

export interface EngineOptions {
  /** Data folder of the embedded SQLite store (`<dataDir>/tapedeck.db`). Default `./.tapedeck`. Ignored with `store`. */
  readonly dataDir?: string;
  /** A store to use instead of the embedded SQLite one. The engine closes it on `close()`. */
  readonly store?: Store;
  /** Durability of the embedded store. Default `"full"`. */
  readonly durability?: Durability;
  /** Implementations of host tools, in this process. */
  readonly hostTools?: HostToolModule;
  /** The MCP client layer (connections cached by server). Default: one of the engine's own. */
  readonly mcp?: McpToolSource;
  /** Tool sources by kind; `host` defaults to `hostTools`, `mcp` to `mcp`. */
  readonly sources?: Partial<Record<ToolSourceKind, ToolSource>>;
  /** Default: QuickJS in 2 worker threads. */
  readonly sandboxes?: SandboxFactory;
  /** Default: the system clock. */
  readonly clock?: Clock;
  readonly limits?: Partial<Omit<EngineLimits, "sandbox">> & { readonly sandbox?: Partial<EngineLimits["sandbox"]> };
}

export interface RegisteredToolset {
  /** Problems that did not stop the registration (an optional MCP server that could not be listed). */
  readonly warnings?: readonly string[];
  readonly id: string;
  readonly toolset: PinnedToolset;
  readonly declarations: Declarations;
}

export interface StartOptions {
  /** The id of a registered toolset. */
  readonly toolset: string;
  /** The model's TypeScript. */
  readonly source: string;
  /** Passed to the default export when it is a function. Default null. */
  readonly input?: JsonValue;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
  /** The run this one forks (see `fork`). */
  readonly parentId?: string;
}

export type StartResult =
  /** The script did not type-check: no run was created. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] }
  /** A run was created and is executing; `end` settles when it ends. */
  | { readonly kind: "started"; readonly runId: string; readonly warnings: readonly Diagnostic[]; readonly end: Promise<RunEnd> };

const DEFAULT_LIMITS: EngineLimits = {
  sandbox: { memoryBytes: SANDBOX_MEMORY_BYTES, stackBytes: SANDBOX_STACK_BYTES, cpuMsPerStep: SANDBOX_CPU_MS_PER_STEP, logLineChars: LOG_LINE_CHARS },
  maxJournalEntries: MAX_JOURNAL_ENTRIES,
  maxValueBytes: MAX_VALUE_BYTES,
  runConcurrency: RUN_CONCURRENCY,
  maxAttempts: MAX_ATTEMPTS,
};

/** A toolset as the engine keeps it: pinned, ready to execute, with its observed result shapes. */
interface ToolsetEntry extends LoadedToolset {
  readonly pinned: PinnedToolset;
  declarations: Declarations;
  /** Bumped when an observed shape changes: part of the checker's cache key. */
  version: number;
  readonly observed: Record<string, JsonSchema>;
  readonly observedText: Map<string, string>;
}

export class Engine {
  readonly #store: Store;
  readonly #sandboxes: SandboxFactory;
  readonly #source: SourceRouter;
  readonly #hostTools: InProcessHostTools | undefined;
  readonly #mcp: McpToolSource;
  readonly #clock: Clock;
  readonly #limits: EngineLimits;
  readonly #toolsets = new Map<string, ToolsetEntry>();
  readonly #executing = new Map<string, Promise<RunEnd>>();
  readonly #executors = new Map<string, RunExecutor>();
  #checker: Promise<ScriptChecker> | undefined;
  #closed = false;

  private constructor(options: EngineOptions, store: Store) {
    this.#store = store;
    this.#sandboxes = options.sandboxes ?? new QuickJsSandboxFactory();
    this.#hostTools = options.hostTools ? new InProcessHostTools(options.hostTools) : undefined;
    this.#mcp = options.mcp ?? new McpToolSource();
    this.#source = new SourceRouter({ ...(this.#hostTools ? { host: this.#hostTools } : {}), mcp: this.#mcp, ...options.sources });
    this.#clock = options.clock ?? systemClock;
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits, sandbox: { ...DEFAULT_LIMITS.sandbox, ...options.limits?.sandbox } };
  }

  /** Opens an engine on a store (by default SQLite in `dataDir`). */
  static async open(options: EngineOptions = {}): Promise<Engine> {
    let store = options.store;
    if (!store) {
      const dataDir = options.dataDir ?? ".tapedeck";
      mkdirSync(dataDir, { recursive: true });
      store = SqliteStore.open({ path: join(dataDir, "tapedeck.db"), durability: options.durability ?? "full" });
    }
    return Promise.resolve(new Engine(options, store));
  }

  /**
   * Checks and pins a toolset file's content, saves it, and returns its id and declarations.
   * `options.override` changes how the tools of an MCP server (by group) are pinned.
   */
  async registerToolset(spec: unknown, options: { readonly override?: Readonly<Record<string, McpOverride>> } = {}): Promise<RegisteredToolset> {
    this.#open();
    let pinned: PinnedToolset;
    let warnings: string[];
    try {
      ({ toolset: pinned, warnings } = await pinToolset(parseToolsetSpec(spec), this.#mcp, options.override));
    } catch (error) {
      if (error instanceof ToolsetSpecError) throw new EngineError("invalid_toolset", error.message);
      throw error;
    }
    const validator = new ArgsValidator();
    for (const tool of pinned.tools) {
      const problem = validator.schemaProblem(tool);
      if (problem) throw new EngineError("invalid_toolset", `The input schema of ${tool.group}.${tool.name} cannot be compiled: ${problem}`);
    }
    await this.#store.putToolset(pinned);
    // The validator that just compiled every schema serves the toolset's runs.
    const loaded = this.#load(pinned, await this.#store.getObservedShapes(pinned.id), validator);
    return { id: pinned.id, toolset: pinned, declarations: loaded.declarations, warnings };
  }

  /** A registered toolset and its declarations. Throws `not_found`. */
  async toolset(id: string): Promise<RegisteredToolset> {
    const loaded = await this.#toolset(id);
    return { id, toolset: loaded.pinned, declarations: loaded.declarations };
  }

  /** Type-checks a script against a toolset's declarations. */
  async check(source: string, toolsetId: string): Promise<CheckResult> {
    const loaded = await this.#toolset(toolsetId);
    const checker = await this.#loadChecker();
    return checker.check(source, { id: `${loaded.id}#${loaded.version}`, text: loaded.declarations.typescript });
  }

  /** Checks the script and, if it type-checks, creates a run and starts executing it. */
  async start(options: StartOptions): Promise<StartResult> {
    this.#open();
    const loaded = await this.#toolset(options.toolset);
    this.#checkHostTools(loaded.pinned);
    const checked = await this.check(options.source, options.toolset);
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const { compileScript } = await import("./script/compile.js");
    const compiled = compileScript(options.source);
    const now = this.#clock.now();
    const id = newRunId(now);
    const input = options.input ?? null;
    const started: JournalEntry = { index: 0, at: now, kind: "run.started", input, replayVersion: REPLAY_VERSION };
    await this.#store.createRun(
      {
        id,
        toolsetId: loaded.id,
        source: options.source,
        js: compiled.js,
        sourceMap: compiled.sourceMap,
        input,
        status: "running",
        createdAt: now,
        ...(options.labels ? { labels: options.labels } : {}),
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(options.parentId ? { parentId: options.parentId } : {}),
      },
      [started],
    );
    const run = await this.#store.getRun(id);
    if (!run) throw new Error(`run ${id} vanished after it was created`);
    return { kind: "started", runId: id, warnings: checked.diagnostics, end: this.#execute(run, loaded) };
  }

  /**
   * Forks a run with corrected code (`retry_run`): a new run on the parent's toolset, linked to
   * it, whose calls that match an unused completed call of the parent (same tool, same canonical
   * arguments, in order, each used once) take the recorded result instead of being sent. The
   * journal marks them `reusedFrom`. The parent is unchanged. Input: the parent's, unless given.
   */
  async fork(options: { readonly parent: string; readonly source: string; readonly input?: JsonValue }): Promise<StartResult> {
    const parent = await this.#run(options.parent);
    return this.start({
      toolset: parent.toolsetId,
      source: options.source,
      input: options.input === undefined ? parent.input : options.input,
      ...(parent.labels ? { labels: parent.labels } : {}),
      ...(parent.namespace ? { namespace: parent.namespace } : {}),
      parentId: parent.id,
    });
  }

  /**
   * Resumes runs left `running` by an engine that stopped (all of them, or the one given): each
   * is replayed from its journal and goes on live. Resolves with each run's end.
   */
  async resume(runId?: string): Promise<{ runId: string; end: Promise<RunEnd> }[]> {
    this.#open();
    const runs = runId ? [await this.#run(runId)] : await this.#store.listRuns({ status: ["running"], limit: 10_000 });
    const resumed: { runId: string; end: Promise<RunEnd> }[] = [];
    for (const run of runs) {
      const loaded = await this.#toolset(run.toolsetId);
      if (!this.#executing.has(run.id)) this.#checkHostTools(loaded.pinned);
      // `#execute` looks for an executor of this run and registers one without awaiting, so
      // two resumes (or a resume and a start) can never run one run twice.
      resumed.push({ runId: run.id, end: this.#execute(run, loaded) });
    }
    return resumed;
  }

  /**
   * Cancels a run that has not ended: `run.cancelled` is journaled and the run becomes
   * `cancelled`; calls in flight are abandoned and their late results ignored. A run that has
   * ended is left as it is: its end is returned.
   */
  async cancel(runId: string, reason = "cancelled"): Promise<RunEnd> {
    this.#open();
    const executor = this.#executors.get(runId);
    if (executor) return executor.cancel(reason);
    const run = await this.#run(runId);
    const ended = await this.end(runId);
    if (ended) return ended;
    const cancelled: RunEnd = { status: "cancelled", reason };
    const now = this.#clock.now();
    const { event, patch } = endRecord(cancelled, now);
    await this.#store.append(runId, [{ ...event, index: run.journalLength, at: now }], patch);
    return cancelled;
  }

  /** How a run ended (waiting for it if it executes in this engine). Undefined if it has not ended and is not executing here. */
  async end(runId: string): Promise<RunEnd | undefined> {
    const executing = this.#executing.get(runId);
    if (executing) return executing;
    const run = await this.#run(runId);
    if (run.status === "completed") return { status: "completed", output: run.output ?? null };
    if (run.status === "failed" && run.error) return { status: "failed", error: run.error };
    if (run.status === "cancelled") {
      const [last] = await this.#store.readJournal(runId, Math.max(0, run.journalLength - 1));
      return { status: "cancelled", reason: last?.kind === "run.cancelled" ? last.reason : "cancelled" };
    }
    return undefined;
  }

  /**
   * Replays a run's whole journal in a fresh sandbox, sending nothing and writing nothing, and
   * checks that the script does what was recorded. See `verify-replay.ts`.
   */
  async verify(runId: string): Promise<VerifyResult> {
    const run = await this.#run(runId);
    const loaded = await this.#toolset(run.toolsetId);
    const entries = await this.#store.readJournal(runId);
    return verifyReplay(run, loaded.groups, entries, this.#sandboxes, this.#limits.sandbox);
  }

  /** A run's record. Throws `not_found`. */
  async getRun(id: string): Promise<RunRecord> {
    return this.#run(id);
  }

  listRuns(query?: RunQuery): Promise<RunRecord[]> {
    return this.#store.listRuns(query);
  }

  /** A page of a run's journal. */
  async journal(runId: string, from = 0, limit = 1000): Promise<JournalEntry[]> {
    await this.#run(runId);
    return this.#store.readJournal(runId, from, limit);
  }

  /**
   * Stops: runs still executing stop where they are (they stay `running`, to be resumed, and
   * their `end` rejects with a `closed` error), then everything is closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const executor of this.#executors.values()) {
      executor.stop(new EngineError("closed", "The engine closed while the run was executing; it stays running and resumes with `resume`."));
    }
    await this.#source.close();
    await this.#sandboxes.close();
    await this.#store.close();
  }

  #execute(run: RunRecord, toolset: LoadedToolset): Promise<RunEnd> {
    const existing = this.#executing.get(run.id);
    if (existing) return existing;
    const executor = new RunExecutor(run, toolset, {
      store: this.#store,
      sandboxes: this.#sandboxes,
      source: this.#source,
      clock: this.#clock,
      limits: this.#limits,
      observe: (tool, value) => this.#observe(toolset.id, tool, value),
    });
    const end = executor.execute().finally(() => {
      this.#executing.delete(run.id);
      this.#executors.delete(run.id);
    });
    // A run whose end nobody awaits must not crash the process when the engine stops under
    // it: the run stays `running` in the store and resumes later.
    end.catch(() => {});
    this.#executing.set(run.id, end);
    this.#executors.set(run.id, executor);
    return end;
  }

  #checkHostTools(toolset: PinnedToolset): void {
    const host = toolset.tools.filter((t) => t.source === "host");
    if (host.length === 0 || this.#hostTools === undefined) {
      if (host.length > 0 && !this.#source.has("host")) {
        throw new EngineError("misconfigured", `The toolset has host tools (${host.map((t) => `${t.group}.${t.name}`).join(", ")}) but this engine has no host tool implementations: pass a host module (--host ./tools.ts).`);
      }
      return;
    }
    const missing = this.#hostTools.missing(host);
    if (missing.length > 0) {
      throw new EngineError("misconfigured", `The host module does not implement ${missing.join(", ")}: export { <group>: { <name>: async (args, ctx) => result } } for every host tool of the toolset.`);
    }
  }

  async #toolset(id: string): Promise<ToolsetEntry> {
    const cached = this.#toolsets.get(id);
    if (cached) return cached;
    const pinned = await this.#store.getToolset(id);
    if (!pinned) throw new EngineError("not_found", `No toolset ${id}. Register it first (tapedeck toolset register <file>).`);
    return this.#load(pinned, await this.#store.getObservedShapes(id));
  }

  #load(pinned: PinnedToolset, observed: Record<string, JsonSchema>, validator = new ArgsValidator()): ToolsetEntry {
    const cached = this.#toolsets.get(pinned.id);
    if (cached) return cached;
    if (pinned.servers) this.#mcp.addServers(pinned.servers);
    const groups: Record<string, string[]> = {};
    for (const tool of pinned.tools) (groups[tool.group] ??= []).push(tool.name);
    const loaded = {
      id: pinned.id,
      pinned,
      byPath: new Map(pinned.tools.map((t) => [`${t.group}.${t.name}`, t])),
      groups,
      validator,
      declarations: renderDeclarations(pinned.tools, observed),
      version: 0,
      observed,
      observedText: new Map(Object.entries(observed).map(([path, shape]) => [path, canonicalJson(shape)])),
    };
    this.#toolsets.set(pinned.id, loaded);
    return loaded;
  }

  /**
   * Records the shape of a result of a tool that declares no output schema, so later scripts
   * are checked against it (`@observed`). Keys and types only, never values.
   */
  #observe(toolsetId: string, tool: PinnedTool, value: JsonValue): void {
    const entry = this.#toolsets.get(toolsetId);
    if (!entry || tool.outputSchema !== undefined) return;
    const path = `${tool.group}.${tool.name}`;
    const before = entry.observed[path];
    const shape = before === undefined ? shapeOf(value) : mergeShapes(before, shapeOf(value));
    const text = canonicalJson(shape);
    // Compared by canonical text, kept per tool, so each result costs one serialisation.
    if (entry.observedText.get(path) === text) return;
    entry.observedText.set(path, text);
    entry.observed[path] = shape;
    entry.version++;
    entry.declarations = renderDeclarations(entry.pinned.tools, entry.observed);
    // Not part of any run's journal: losing it in a crash only delays a better declaration.
    this.#store.putObservedShape(toolsetId, path, shape).catch(() => {});
  }

  async #run(id: string): Promise<RunRecord> {
    const run = await this.#store.getRun(id);
    if (!run) throw new EngineError("not_found", `No run ${id}.`);
    return run;
  }

  #loadChecker(): Promise<ScriptChecker> {
    // TypeScript takes a second to load: only commands that check scripts pay for it.
    this.#checker ??= import("./script/checker.js").then((m) => new m.ScriptChecker());
    return this.#checker;
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closed.");
  }
}
