/**
 * The engine: the one entry point of everything a run goes through (toolsets, checks, starts,
 * forks, waits and their decisions, tests, credentials), over a store, a sandbox factory and the
 * tool sources. It is long because it is the seam where those meet; each concern it coordinates
 * lives in its own module (`runs/run-executor.ts` executes one run, `runs/run-leases.ts` keeps
 * processes apart, `workflows/child-runs.ts`, `secrets/credential-renewal.ts`, `testing/…`).
 *
 * Invariants:
 * - A run executes in at most one executor of one process at a time (the executors map, checked
 *   and set without an await, plus the store's lease); requests for a run held elsewhere go to
 *   its holder through the store.
 * - What a run did is durable before anyone hears of it: events, waiters and webhooks follow the
 *   commit that records the change (with `recordEvents`, the events are in that commit).
 * - A parked run holds no sandbox and is woken by its timer, a signal, a decision, a child's end
 *   or a renewed credential, by replay.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { decisionEvent, needsDecision, terminalStatuses } from "@tapedeck/protocol";
import type {
  Decision,
  DecisionWait,
  JournalEntry,
  JsonSchema,
  JsonValue,
  PinnedTool,
  PinnedToolset,
  PinnedWorkflow,
  RunEnd,
  RunEvent,
  RunWait,
  ToolSourceKind,
} from "@tapedeck/protocol";
import { systemClock, VirtualClock, type Clock } from "./clock.js";
import { EngineError } from "./errors.js";
import {
  HOLD_WAIT_MS,
  LOG_LINE_CHARS,
  MAX_ATTEMPTS,
  MAX_HOST_FAULTS,
  MAX_JOURNAL_ENTRIES,
  MAX_VALUE_BYTES,
  RUN_CONCURRENCY,
  SANDBOX_CPU_MS_PER_STEP,
  SANDBOX_MEMORY_BYTES,
  SANDBOX_STACK_BYTES,
} from "./limits.js";
import { ArgsValidator } from "./runs/args-validator.js";
import { countsAsHostFault, describeFault } from "./runs/host-faults.js";
import { endRecord, REPLAY_VERSION, RunExecutor, type ExecutionResult, type ExecutorLimits, type LoadedToolset, type RunPause } from "./runs/run-executor.js";
import { RunLeases } from "./runs/run-leases.js";
import { RunWaiters } from "./runs/run-waiters.js";
import { WakeTimer } from "./runs/wake-timer.js";
import { verifyReplay, type VerifyResult } from "./runs/verify-replay.js";
import { QuickJsSandboxFactory } from "./sandbox/quickjs-sandbox-factory.js";
import type { SandboxFactory } from "./sandbox/sandbox.js";
import type { CheckOptions, ScriptDeclarations } from "./script/checker.js";
import { CheckerPool, CheckTimeoutError, type ScriptCheck } from "./script/checker-pool.js";
import { scriptSizeDiagnostic } from "./script/script-size.js";
import type { CheckResult, Diagnostic } from "./script/diagnostic.js";
import { InProcessHostTools, type HostToolModule } from "./sources/in-process-host-tools.js";
import { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
import { HttpToolSource } from "./sources/http/http-tool-source.js";
import { SourceRouter } from "./sources/source-router.js";
import { vaultResolver } from "./secrets/credential-resolver.js";
import { MasterKeySource } from "./secrets/master-key.js";
import { CredentialVault } from "./secrets/vault.js";
import { CredentialRenewal } from "./secrets/credential-renewal.js";
import { closeAll } from "./util/close-all.js";
import { ToolSearch, type ToolSearchHit, type ToolSearchOptions } from "./toolset/tool-search.js";
import type { ToolSource } from "./sources/tool-source.js";
import { openStore } from "./store/open-store.js";
import type { RunQuery, RunRecord, RunRequest, Store } from "./store/store.js";
import { renderDeclarations, type Declarations } from "./toolset/declarations.js";
import { mergeShapes, shapeOf } from "./toolset/observed-shape.js";
import { pinToolset } from "./toolset/pin.js";
import { nullObject } from "./util/null-object.js";
import type { McpAddresses, McpOverride } from "./toolset/pin-mcp.js";
import { canonicalJson } from "./util/canonical-json.js";
import { valueProblem } from "./util/value-bounds.js";
import { parseToolsetSpec, ToolsetSpecError } from "./toolset/toolset-file.js";
import { featureGlobals } from "./script/feature-globals.js";
import { importableTools, scriptFeatures } from "./toolset/script-features.js";
import { newRunId } from "./util/ids.js";
import { parseScenario, ScenarioError, type Scenario } from "./testing/scenario.js";
import { ScenarioSource } from "./testing/scenario-source.js";
import { cassetteOf, runTest, type CassetteDocument, type TestReport } from "./testing/test-script.js";
import { ChildRuns } from "./workflows/child-runs.js";
import { deriveWithWorkflow, pinWorkflow, WorkflowSpecError, type SaveWorkflowOptions } from "./workflows/workflow-spec.js";
import { schemaToType } from "./toolset/schema-to-type.js";
import type { RunCaller } from "./store/store.js";

/**
 * The engine: registers toolsets, checks scripts, starts, executes and resumes runs. Everything
 * the CLI and the server do goes through here. It knows nothing of HTTP.
 */

/** Limits of runs; every field has a default (see `limits.ts` for why). */
export type EngineLimits = ExecutorLimits;

export interface EngineOptions {
  /**
   * Where runs are kept: a data folder or a store URL, opened with `openStore` (a folder: SQLite
   * in `<folder>/tapedeck.db`, durability `full`; `memory:`: in memory), or a store already
   * opened (`openStore(location, { durability })` for another durability). The engine closes it
   * on `close()`. Default `"./.tapedeck"`.
   */
  readonly store?: string | Store;
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
  /**
   * Which parked runs this engine wakes when their timers are due: `true` (default), every run
   * of the store, from the moment the engine opens (overdue ones at once) — a server; `"owned"`,
   * only runs this engine holds (it parked them itself) — a CLI command keeping its run; `false`,
   * none — an engine that only inspects. An engine that wakes runs keeps holding the runs it
   * parks, so signals and decisions sent from other processes reach it.
   */
  readonly wake?: boolean | "owned";
  /** Where the run-bound webhook URLs point: the server that serves `POST /hooks/<token>`. Default `http://127.0.0.1:7700`. */
  readonly webhookBaseUrl?: string;
  /**
   * Checks and transpiles scripts, off the engine's event loop; share one with other engines
   * (each loads TypeScript, which takes a second). Default: a `CheckerPool` of the engine's own
   * (two worker threads, started at the first check), closed with the engine.
   */
  readonly checker?: ScriptCheck;
  /**
   * TESTS ONLY, never in production: lets the `http` tool reach loopback addresses (127.0.0.0/8,
   * ::1), so a test can serve an allowed host on a local server. Every other refused range stays
   * refused and the allow-list still applies. Default false. Only this option turns it on; no
   * toolset file can. Ignored when `sources.builtin` is given.
   */
  readonly unsafeHttpAllowLoopbackForTests?: boolean;
  /**
   * The master key file of the credential vault. Default: `master.key` in the store's data
   * folder (`Store.dataFolder`); for a store without one (in memory, a database URL), none: the
   * key must then come from `TAPEDECK_MASTER_KEY`. The file is created (mode 0600) only when a
   * first credential is set.
   */
  readonly masterKeyFile?: string;
  /**
   * Write every run event (parked, ended, decision needed) into the store in the commit that
   * makes it happen, to be read with `Store.pendingEvents` and removed by its reader: the server
   * sets it so that its webhooks miss no event across a crash. Default false (nothing would
   * remove the rows). Listeners (`on`) hear events either way.
   */
  readonly recordEvents?: boolean;
}

export interface TestOptions {
  readonly toolset: string;
  readonly source: string;
  readonly input?: JsonValue;
  /** A scenario document (see `testing/scenario.ts`), or a cassette. Default: no mocks. */
  readonly scenario?: unknown;
}

export type TestResult =
  /** The script did not type-check. */
  { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] } | ({ readonly kind: "tested" } & TestReport);

/** Where the store (and so the master key file) is when none is given: a data folder. */
const DEFAULT_DATA_DIR = ".tapedeck";

/** How often an engine that wakes every run looks for runs other processes parked. */
const WAKE_RESCAN_MS = 5_000;

/** A test run's journal is bounded lower than a real run's: a script looping in virtual time fails fast. */
const TEST_MAX_JOURNAL_ENTRIES = 50_000;

/** What the engine tells its listeners (the server turns them into webhooks). */
export type EngineEvent =
  /** Something happened to a run (see `RunEvent`). */
  | RunEvent
  /** The engine failed to do something in the background (waking runs); the runs are intact. */
  | { readonly type: "engine.error"; readonly error: unknown };

/** A call waiting for a decision, with its run. `id` is `<run_id>/<seq>` (the call's idempotency key). */
export type PendingDecision = DecisionWait & {
  readonly id: string;
  readonly runId: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly namespace?: string;
};

export interface RegisteredToolset {
  /** Problems that did not stop the registration (an optional MCP server that could not be listed). */
  readonly warnings?: readonly string[];
  readonly id: string;
  readonly toolset: PinnedToolset;
  readonly declarations: Declarations;
}

export type { SaveWorkflowOptions };

export interface RegisterToolsetOptions {
  /** Changes how MCP tools are pinned, by group (seed 002's `override`). Default: none. */
  readonly override?: Readonly<Record<string, McpOverride>>;
  /**
   * Where the toolset's Streamable HTTP MCP servers may be reached: `"public"` for a toolset
   * registered on a tenant's behalf (the server passes it for keys limited to a namespace or
   * labels): each connection, registration's included, resolves the host once, checks every
   * answer and connects to the checked address, so loopback, private and metadata addresses are
   * refused (`refused`). Default `"any"` (the operator's toolsets).
   */
  readonly mcpAddresses?: McpAddresses;
}

export type SaveWorkflowResult =
  /** The workflow's code did not type-check (or breaks its input/output contract): nothing was saved. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] }
  /** The derived toolset that pins the workflow: its id (new, content-addressed), what it pins, and its declarations. */
  | {
      readonly kind: "saved";
      readonly id: string;
      readonly toolset: PinnedToolset;
      readonly declarations: Declarations;
      readonly warnings: readonly Diagnostic[];
    };

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
  /**
   * Names this start: when a run of the same namespace was started with the key, that run is
   * the answer (`existing`) and nothing is checked or created, even if two starts race. The rest
   * of the options are not compared. Default: none.
   */
  readonly idempotencyKey?: string;
  /** How long the run may take, ms: its `expiresAt` is its start plus this (the server cancels it then). Default: no expiry. */
  readonly ttlMs?: number;
  /**
   * W3C trace context the run belongs to (the LLM call that wrote the script): its calls carry
   * this trace id, so tools' spans join that trace. Default: a trace of the run's own.
   */
  readonly traceparent?: string;
}

export type StartResult =
  /** The script did not type-check: no run was created. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] }
  /**
   * A run was created and is executing (or, `existing`, the idempotency key named a run already:
   * no warnings, as it was checked when first started); `end` settles when it ends.
   */
  | { readonly kind: "started"; readonly runId: string; readonly warnings: readonly Diagnostic[]; readonly end: Promise<RunEnd>; readonly existing: boolean };

export type { ExecutionResult, RunPause };

const DEFAULT_LIMITS: EngineLimits = {
  sandbox: { memoryBytes: SANDBOX_MEMORY_BYTES, stackBytes: SANDBOX_STACK_BYTES, cpuMsPerStep: SANDBOX_CPU_MS_PER_STEP, logLineChars: LOG_LINE_CHARS },
  maxJournalEntries: MAX_JOURNAL_ENTRIES,
  maxValueBytes: MAX_VALUE_BYTES,
  runConcurrency: RUN_CONCURRENCY,
  maxAttempts: MAX_ATTEMPTS,
  holdWaitMs: HOLD_WAIT_MS,
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
  /** Credentials, sealed in the store; the `http` tool injects them (`secrets/vault.ts`). */
  readonly credentials: CredentialVault;
  readonly #sandboxes: SandboxFactory;
  readonly #source: SourceRouter;
  readonly #hostTools: InProcessHostTools | undefined;
  readonly #mcp: McpToolSource;
  readonly #clock: Clock;
  readonly #limits: EngineLimits;
  readonly #toolsets = new Map<string, ToolsetEntry>();
  /** The execution of each run executing here, and how it stops (ends or parks). */
  readonly #executors = new Map<string, { readonly executor: RunExecutor; readonly stopped: Promise<unknown> }>();
  /** Parked runs being woken, so two wake-ups of one run start one execution. */
  readonly #waking = new Map<string, Promise<void>>();
  readonly #waiters = new RunWaiters();
  readonly #listeners = new Set<(event: EngineEvent) => void>();
  readonly #webhookBaseUrl: string;
  readonly #wakeMode: boolean | "owned";
  readonly #recordEvents: boolean;
  readonly #leases: RunLeases;
  /** The child runs of `workflows.<name>` calls (`workflows/child-runs.ts`). */
  readonly #children: ChildRuns;
  #wake: WakeTimer | undefined;
  #rescan: NodeJS.Timeout | undefined;
  #checker: ScriptCheck | undefined;
  /** The checker this engine made (and closes). */
  #ownChecker: CheckerPool | undefined;
  #closed = false;

  private constructor(options: EngineOptions, store: Store) {
    this.#store = store;
    this.#sandboxes = options.sandboxes ?? new QuickJsSandboxFactory();
    this.#hostTools = options.hostTools ? new InProcessHostTools(options.hostTools) : undefined;
    const keyFile = options.masterKeyFile ?? (store.dataFolder === undefined ? undefined : join(store.dataFolder, "master.key"));
    this.credentials = new CredentialVault(store.credentials, new MasterKeySource(keyFile === undefined ? {} : { keyFile }));
    // An MCP source given in the options keeps its own credentials (its options decide).
    // A stdio server that stops on its own is reported with its last stderr lines (the server logs engine errors).
    this.#mcp =
      options.mcp ??
      new McpToolSource({
        credentials: vaultResolver(store, this.credentials),
        log: (message) => this.#emit({ type: "engine.error", error: new Error(message) }),
      });
    this.#source = new SourceRouter({
      ...(this.#hostTools ? { host: this.#hostTools } : {}),
      mcp: this.#mcp,
      // `http.fetch`; it opens no connection until a run calls `fetch`.
      builtin:
        options.sources?.builtin ??
        new HttpToolSource({
          unsafeAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true,
          credentials: vaultResolver(store, this.credentials),
        }),
      ...options.sources,
    });
    this.#clock = options.clock ?? systemClock;
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits, sandbox: { ...DEFAULT_LIMITS.sandbox, ...options.limits?.sandbox } };
    if (options.checker) this.#checker = options.checker;
    this.#webhookBaseUrl = (options.webhookBaseUrl ?? "http://127.0.0.1:7700").replace(/\/+$/, "");
    this.#wakeMode = options.wake ?? true;
    this.#recordEvents = options.recordEvents === true;
    const onError = (error: unknown) => this.#emit({ type: "engine.error", error });
    const renewal = new CredentialRenewal({
      store,
      approve: (runId, seq, reason) => this.approve(runId, seq, { reason }),
      decidedMeanwhile: (error) => error instanceof EngineError && error.code === "conflict",
      onError,
    });
    this.credentials.onSet(async (scope, name) => {
      if (!this.#closed) await renewal.renewed(scope, name).catch(onError);
    });
    this.#leases = new RunLeases(store, (runId, request) => this.#applyRequest(runId, request), onError);
    this.#children = new ChildRuns({
      store,
      clock: this.#clock,
      toolset: (id) => this.#toolset(id),
      execute: (run, toolset) => this.#execute(run, toolset),
      executing: (runId) => this.#executors.has(runId),
      resume: (run) => this.#resumeStopped(run),
      ended: (run) => this.#recordedEnd(run),
      signal: (runId, name, payload, options) => this.signal(runId, name, payload, options),
      compile: (source) => this.#checks().compile(source),
    });
    if (this.#wakeMode !== false) this.#wake = new WakeTimer(this.#clock, (now) => this.#wakeDue(now), onError);
  }

  /** Opens an engine on its store (`options.store`, by default the data folder `./.tapedeck`). */
  static async open(options: EngineOptions = {}): Promise<Engine> {
    const store = typeof options.store === "object" ? options.store : await openStore(options.store ?? DEFAULT_DATA_DIR);
    const engine = new Engine(options, store);
    if (engine.#wakeMode === true) {
      engine.#wake?.schedule(await store.nextWakeAt());
      // Runs parked by other processes (a detached `tapedeck run`) are in the store, not in this
      // engine's timer: look for them every few seconds (wall-clock time, unref'd).
      engine.#rescan = setInterval(() => {
        store.nextWakeAt().then(
          (next) => engine.#wake?.schedule(next),
          () => {},
        );
      }, WAKE_RESCAN_MS);
      engine.#rescan.unref();
    }
    return engine;
  }

  /** Listens to the engine's events; returns a function that stops listening. */
  on(listener: (event: EngineEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Checks and pins a toolset file's content, saves it, and returns its id and declarations.
   * `options.override` changes how the tools of an MCP server (by group) are pinned.
   */
  async registerToolset(spec: unknown, options: RegisterToolsetOptions = {}): Promise<RegisteredToolset> {
    this.#open();
    let pinned: PinnedToolset;
    let warnings: string[];
    try {
      ({ toolset: pinned, warnings } = await pinToolset(
        parseToolsetSpec(spec),
        this.#mcp,
        options.override,
        (id) => this.#store.getToolset(id),
        options.mcpAddresses,
      ));
    } catch (error) {
      if (error instanceof ToolsetSpecError) throw new EngineError("invalid_toolset", error.message);
      throw error;
    }
    const validator = new ArgsValidator();
    for (const tool of pinned.tools) {
      const problem = validator.schemaProblem(tool);
      if (problem) throw new EngineError("invalid_toolset", `The input schema of ${tool.group}.${tool.name} cannot be compiled: ${problem}`);
    }
    // The validator that just compiled every schema serves the toolset's runs. Loaded before it
    // is stored: a toolset that cannot be loaded is refused, and leaves nothing behind.
    const loaded = this.#load(pinned, await this.#store.getObservedShapes(pinned.id), validator);
    await this.#put(pinned);
    return { id: pinned.id, toolset: pinned, declarations: loaded.declarations, warnings };
  }

  /** A registered toolset and its declarations. Throws `not_found`. */
  async toolset(id: string): Promise<RegisteredToolset> {
    const loaded = await this.#toolset(id);
    return { id, toolset: loaded.pinned, declarations: loaded.declarations };
  }

  /**
   * The toolset's tools that best match `query` (BM25 over groups, names, descriptions and
   * parameters), best first, with their declarations (`search_tools`). Throws `not_found` for an
   * unknown toolset, `invalid_request` for a query with no words or a bad limit.
   */
  async searchTools(toolsetId: string, query: string, options: ToolSearchOptions = {}): Promise<readonly ToolSearchHit[]> {
    return ToolSearch.of((await this.#toolset(toolsetId)).pinned).search(query, options);
  }

  /** Type-checks a script against a toolset's declarations (off the event loop); a script past `MAX_SCRIPT_BYTES` is refused unchecked. */
  async check(source: string, toolsetId: string): Promise<CheckResult> {
    const loaded = await this.#toolset(toolsetId);
    return this.#checkScript(
      source,
      { id: `${loaded.id}#${loaded.version}`, text: loaded.declarations.typescript },
      { extraGlobals: featureGlobals(loaded.features) },
    );
  }

  /**
   * Saves a workflow: checks its code against the toolset's declarations, and that its default
   * export takes `input` and returns `output` (typed from their schemas); then registers the
   * toolset derived from this one that pins it (the same name replaces the workflow in the
   * derived toolset; the base is unchanged). A script that does not type-check is `refused`.
   * Throws `invalid_request` for a malformed name, description or schema and `invalid_toolset`
   * for a schema that cannot be compiled; `not_found` for an unknown toolset.
   */
  async saveWorkflow(options: SaveWorkflowOptions): Promise<SaveWorkflowResult> {
    this.#open();
    const base = await this.#toolset(options.toolset);
    let workflow: PinnedWorkflow;
    try {
      workflow = pinWorkflow(options, base.pinned, this.#children.schemas);
    } catch (error) {
      if (error instanceof WorkflowSpecError) throw new EngineError(error.kind, error.message);
      throw error;
    }
    const contract = { input: schemaToType(workflow.input, { style: "ts" }), output: schemaToType(workflow.output, { style: "ts" }) };
    const checked = await this.#checkScript(
      workflow.source,
      { id: `${base.id}#${base.version}`, text: base.declarations.typescript },
      { extraGlobals: featureGlobals(base.features), workflow: contract },
    );
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const pinned = deriveWithWorkflow(base.pinned, options.name, workflow);
    // The derived toolset has the base's tools: it starts with what was observed of their results.
    const observed = { ...base.observed, ...(await this.#store.getObservedShapes(pinned.id)) };
    const loaded = this.#load(pinned, observed, base.validator);
    await this.#put(pinned);
    return { kind: "saved", id: pinned.id, toolset: pinned, declarations: loaded.declarations, warnings: checked.diagnostics };
  }

  /** Checks the script and, if it type-checks, creates a run and starts executing it. */
  async start(options: StartOptions): Promise<StartResult> {
    this.#open();
    const key = options.idempotencyKey;
    const first = key === undefined ? undefined : await this.#store.getRunByIdempotencyKey(key, options.namespace === "" ? undefined : options.namespace);
    if (first) return this.#existing(first.id);
    if (options.ttlMs !== undefined && !(options.ttlMs > 0 && Number.isFinite(options.ttlMs)))
      throw new EngineError("invalid_request", `A run's ttl must be a positive number of milliseconds, not ${options.ttlMs}.`);
    const inputProblem = options.input === undefined ? undefined : valueProblem(options.input);
    if (inputProblem !== undefined) throw new EngineError("invalid_request", `The run's input is refused: ${inputProblem}.`);
    const loaded = await this.#toolset(options.toolset);
    this.#checkHostTools(loaded.pinned);
    const checked = await this.check(options.source, options.toolset);
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const compiled = await this.#checks().compile(options.source);
    const now = this.#clock.now();
    const id = newRunId(now);
    const input = options.input ?? null;
    const traceparent = options.traceparent === undefined ? {} : { traceparent: checkTraceparent(options.traceparent) };
    const started: JournalEntry = { index: 0, at: now, kind: "run.started", input, replayVersion: REPLAY_VERSION, ...traceparent };
    const created = await this.#store.createRun(
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
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(options.ttlMs === undefined ? {} : { expiresAt: now + options.ttlMs }),
      },
      [started],
    );
    // A start with the same key committed first (while this one was checked): its run is the answer.
    if (created.kind === "duplicate") return this.#existing(created.runId);
    const run = await this.#store.getRun(id);
    if (!run) throw new Error(`run ${id} vanished after it was created`);
    const end = this.#waiters.end(id);
    this.#execute(run, loaded);
    return { kind: "started", runId: id, warnings: checked.diagnostics, end, existing: false };
  }

  /**
   * Forks a run with corrected code (`retry_run`): a new run on the parent's toolset, linked to
   * it, whose calls that match an unused completed call of the parent (same tool, same canonical
   * arguments, in order, each used once) take the recorded result instead of being sent. The
   * journal marks them `reusedFrom`. The parent is unchanged. Input: the parent's, unless given.
   * `idempotencyKey` as for `start` (in the parent's namespace); `ttlMs`: the parent's TTL unless given.
   */
  async fork(options: {
    readonly parent: string;
    readonly source: string;
    readonly input?: JsonValue;
    readonly idempotencyKey?: string;
    readonly ttlMs?: number;
    readonly traceparent?: string;
  }): Promise<StartResult> {
    const parent = await this.#run(options.parent);
    const ttlMs = options.ttlMs ?? (parent.expiresAt === undefined ? undefined : parent.expiresAt - parent.createdAt);
    return this.start({
      toolset: parent.toolsetId,
      source: options.source,
      input: options.input === undefined ? parent.input : options.input,
      ...(parent.labels ? { labels: parent.labels } : {}),
      ...(parent.namespace ? { namespace: parent.namespace } : {}),
      parentId: parent.id,
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
      ...(ttlMs === undefined ? {} : { ttlMs }),
      ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent }),
    });
  }

  /**
   * Resumes runs left `running` by an engine that stopped, and parked runs whose timers are due
   * (all of them, or the one given, which resumes whatever its state as long as it has not
   * ended): each is replayed from its journal and goes on live. Resolves with each run's end.
   */
  async resume(runId?: string): Promise<{ runId: string; end: Promise<RunEnd> }[]> {
    this.#open();
    const runs = runId
      ? [await this.#run(runId)]
      : [
          ...(await this.#store.listRuns({ status: ["running"], limit: 10_000 })),
          ...(await this.#store.listRuns({ wakeBy: this.#clock.now(), limit: 10_000 })),
        ];
    const resumed: { runId: string; end: Promise<RunEnd> }[] = [];
    for (const run of runs) {
      if (!terminalStatuses.includes(run.status) && this.#leases.heldElsewhere(run) && !this.#executors.has(run.id)) {
        // Another live process executes or keeps it: not taken over.
        if (runId !== undefined)
          throw new EngineError(
            "conflict",
            `Run ${run.id} is held by another live process (${run.owner?.id}); it goes on there. Signals, decisions and cancels sent from here reach it.`,
          );
        continue;
      }
      if (terminalStatuses.includes(run.status)) {
        resumed.push({ runId: run.id, end: Promise.resolve((await this.end(run.id))!) });
        continue;
      }
      const loaded = await this.#toolset(run.toolsetId);
      if (!this.#executors.has(run.id)) this.#checkHostTools(loaded.pinned);
      const end = this.#waiters.end(run.id);
      if (run.status === "waiting") await this.#unpark(run.id);
      else this.#execute(run, loaded);
      resumed.push({ runId: run.id, end });
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
    for (let live = this.#executors.get(runId); live; live = this.#executors.get(runId)) {
      const result = await live.executor.cancel(reason);
      // The run parked as the cancel arrived: cancel it parked.
      if (result.status !== "waiting") return result;
    }
    const run = await this.#run(runId);
    const ended = await this.#recordedEnd(run);
    if (ended) return ended;
    const cancelled: RunEnd = { status: "cancelled", reason };
    if (this.#leases.heldElsewhere(run)) {
      // The process holding the run cancels it (promptly: it takes its requests a few times a second).
      await this.#store.putRunRequest(runId, { kind: "cancel", reason }, this.#clock.now());
      return cancelled;
    }
    const now = this.#clock.now();
    const { event, patch } = endRecord(cancelled, now);
    const events: RunEvent[] = this.#recordEvents ? [{ type: "run.ended", runId, end: cancelled }] : [];
    const wake = run.caller ? { wakeRun: run.caller.runId } : {};
    await this.#store.append(runId, [{ ...event, index: run.journalLength, at: now }], {
      ...patch,
      waits: null,
      wakeAt: null,
      ...wake,
      ...(events.length > 0 ? { events } : {}),
    });
    this.#report(runId, cancelled, run.caller);
    return cancelled;
  }

  /**
   * How a run ended. A run executing or parked in this engine is waited for (across parks, as
   * long as this engine wakes it). Undefined for a run left `running` by another engine.
   */
  async end(runId: string): Promise<RunEnd | undefined> {
    if (this.#executors.has(runId)) return this.#waiters.end(runId);
    const run = await this.#run(runId);
    const ended = await this.#recordedEnd(run);
    if (ended) return ended;
    return run.status === "waiting" ? this.#waiters.end(runId) : undefined;
  }

  /**
   * The run's end, or what it waits for, at once if it is parked, else at its next end or park.
   * With `next`, a parked run is waited for too: its next end or park after it wakes in this
   * engine. Undefined for a run left `running` by another engine.
   */
  async settled(runId: string, options: { readonly next?: boolean } = {}): Promise<ExecutionResult | undefined> {
    if (this.#executors.has(runId) || this.#waking.has(runId)) return this.#waiters.settled(runId);
    if (options.next === true) {
      const waiting = this.#waiters.settled(runId);
      const run = await this.#run(runId);
      if (run.status === "waiting" || this.#executors.has(runId) || this.#waking.has(runId)) return waiting;
      return (await this.#recordedEnd(run)) ?? waiting;
    }
    const run = await this.#run(runId);
    if (run.status === "waiting") return { status: "waiting", waits: run.waits ?? [], ...(run.wakeAt === undefined ? {} : { wakeAt: run.wakeAt }) };
    return await this.#recordedEnd(run);
  }

  /**
   * Sends the signal `name` to a run. It is kept until a `signal(name)` call of the run takes
   * it (each signal is taken once, oldest first); a run parked on it wakes. With a `key` used
   * before for this run, nothing is sent again (`duplicate`). `heldBy`: another live process
   * holds the run and takes the signal there (within a fraction of a second).
   */
  async signal(
    runId: string,
    name: string,
    payload: JsonValue = null,
    options: { readonly key?: string } = {},
  ): Promise<{ readonly signalId: number; readonly duplicate: boolean; readonly heldBy?: string }> {
    this.#open();
    if (typeof name !== "string" || name === "")
      throw new EngineError("invalid_request", "A signal needs a name: a non-empty string the script waits for with signal(name).");
    const problem = valueProblem(payload);
    if (problem !== undefined) throw new EngineError("invalid_request", `The signal's payload is refused: ${problem}.`);
    const bytes = jsonBytes(payload);
    if (bytes === undefined)
      throw new EngineError("invalid_request", "The signal's payload is not JSON; send plain data (objects, arrays, strings, numbers, booleans, null).");
    if (bytes > this.#limits.maxValueBytes)
      throw new EngineError(
        "invalid_request",
        `The signal's payload is ${bytes} bytes; one recorded value may be at most ${this.#limits.maxValueBytes} bytes.`,
      );
    const run = await this.#run(runId);
    if (terminalStatuses.includes(run.status)) {
      // A keyed signal sent again after it ended the run (a retried request) was sent: say so.
      const sent = options.key === undefined ? undefined : await this.#store.signalByKey(runId, options.key);
      if (sent !== undefined) return { signalId: sent, duplicate: true };
      throw new EngineError("conflict", `Run ${runId} has ended (${run.status}); the signal "${name}" was not sent.`);
    }
    const kept = await this.#store.putSignal({ runId, name, payload, at: this.#clock.now(), ...(options.key === undefined ? {} : { key: options.key }) });
    const heldBy = kept.duplicate ? undefined : await this.#notify(runId, { kind: "signal", name });
    return { signalId: kept.id, duplicate: kept.duplicate, ...(heldBy === undefined ? {} : { heldBy }) };
  }

  /**
   * Approves a call waiting for approval (or parked): the decision is journaled, then the call is
   * sent with its key. `heldBy`: another live process holds the run and decides there.
   */
  approve(runId: string, seq: number, options: { readonly reason?: string } = {}): Promise<{ readonly heldBy?: string }> {
    return this.#decide(runId, seq, "approved", options.reason);
  }

  /** Rejects a call waiting for approval (or parked): the decision is journaled; the script gets a `ToolError` (`approval_rejected`, `schema_changed` for a parked call). */
  reject(runId: string, seq: number, options: { readonly reason?: string } = {}): Promise<{ readonly heldBy?: string }> {
    return this.#decide(runId, seq, "rejected", options.reason);
  }

  /** Calls waiting for a decision, oldest run first: of one run, or of every run matching `query`. */
  async pendingDecisions(
    query: { readonly runId?: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>>; readonly limit?: number } = {},
  ): Promise<PendingDecision[]> {
    const runs = query.runId
      ? [await this.#run(query.runId)]
      : await this.#store.listRuns({
          needsDecision: true,
          limit: query.limit ?? 1000,
          ...(query.namespace ? { namespace: query.namespace } : {}),
          ...(query.labels ? { labels: query.labels } : {}),
        });
    return runs.reverse().flatMap((run) =>
      (run.waits ?? []).filter(needsDecision).map((wait) => ({
        ...wait,
        id: `${run.id}/${wait.seq}`,
        runId: run.id,
        ...(run.labels ? { labels: run.labels } : {}),
        ...(run.namespace ? { namespace: run.namespace } : {}),
      })),
    );
  }

  /** A POST to a run-bound webhook URL: its body becomes the signal the URL was made for. Throws `not_found` for an unknown token. */
  async deliverWebhook(token: string, payload: JsonValue): Promise<{ readonly runId: string; readonly name: string; readonly signalId: number }> {
    const binding = await this.#store.getWebhook(hashToken(token));
    if (!binding) throw new EngineError("not_found", "No webhook with this URL.");
    const { signalId } = await this.signal(binding.runId, binding.name, payload);
    return { runId: binding.runId, name: binding.name, signalId };
  }

  /**
   * `test_script`: runs a script against a scenario (mocks, signals and decisions at virtual
   * times, or a run's recorded calls) in virtual time, on an engine of its own that shares only
   * this engine's toolsets, checker and sandboxes. Nothing is sent to a tool and nothing is
   * written to this engine's store; a year of sleeps takes no real time.
   */
  async test(options: TestOptions): Promise<TestResult> {
    this.#open();
    const loaded = await this.#toolset(options.toolset);
    const scenario = await this.#scenario(options.scenario);
    const checked = await this.check(options.source, options.toolset);
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const clock = new VirtualClock(scenario.start ?? this.#clock.now());
    const store = await openStore("memory:", { durability: "off" });
    await store.putToolset(loaded.pinned);
    for (const [tool, shape] of Object.entries(loaded.observed)) await store.putObservedShape(loaded.id, tool, shape);
    const source = new ScenarioSource(scenario, clock);
    const sandboxes = this.#sandboxes;
    const child = await Engine.open({
      store,
      clock,
      sandboxes: { create: (o) => sandboxes.create(o), close: () => Promise.resolve() },
      // Built-ins too: a test's `fetch` is answered by the scenario, never sent.
      sources: { host: source, mcp: source, builtin: source },
      wake: false,
      checker: this.#checks(),
      webhookBaseUrl: this.#webhookBaseUrl,
      limits: { ...this.#limits, maxJournalEntries: Math.min(this.#limits.maxJournalEntries, TEST_MAX_JOURNAL_ENTRIES) },
    });
    try {
      const report = await runTest(child, clock, source, scenario, {
        toolset: loaded.id,
        source: options.source,
        ...(options.input === undefined ? {} : { input: options.input }),
      });
      return { kind: "tested", ...report };
    } finally {
      await child.close();
    }
  }

  /** A run's recorded calls as a cassette: a scenario document that `test` replays without sending anything. */
  async cassette(runId: string): Promise<CassetteDocument> {
    await this.#run(runId);
    return cassetteOf(await this.#store.readJournal(runId));
  }

  async #scenario(document: unknown): Promise<Scenario> {
    try {
      const fromRun = typeof document === "object" && document !== null ? (document as { from_run?: unknown }).from_run : undefined;
      if (typeof fromRun !== "string") return parseScenario(document);
      // from_run: the run's cassette first, then what the scenario adds.
      const cassette = await this.cassette(fromRun);
      const own = document as Record<string, unknown[] | undefined>;
      const { from_run: _, ...rest } = own;
      return parseScenario({
        start: cassette.start,
        ...rest,
        recorded: [...cassette.recorded, ...(own.recorded ?? [])],
        signals: [...cassette.signals, ...(own.signals ?? [])],
        approvals: [...cassette.approvals, ...(own.approvals ?? [])],
      });
    } catch (error) {
      if (error instanceof ScenarioError) throw new EngineError("invalid_request", `The test scenario is invalid: ${error.message}.`);
      throw error;
    }
  }

  /**
   * Replays a run's whole journal in a fresh sandbox, sending nothing and writing nothing, and
   * checks that the script does what was recorded. See `verify-replay.ts`.
   */
  async verify(runId: string): Promise<VerifyResult> {
    const run = await this.#run(runId);
    const loaded = await this.#toolset(run.toolsetId);
    const entries = await this.#store.readJournal(runId);
    return verifyReplay(run, loaded, entries, this.#sandboxes, this.#limits.sandbox);
  }

  /** The runs executing in this engine now (not parked ones). */
  executing(): string[] {
    return [...this.#executors.keys()];
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
    this.#wake?.stop();
    clearInterval(this.#rescan);
    const closed = new EngineError(
      "closed",
      "The engine closed while the run was executing or waiting; it resumes with `resume` (a waiting run wakes in the next engine).",
    );
    for (const { executor } of this.#executors.values()) executor.stop(closed);
    this.#waiters.failAll(closed);
    await closeAll([
      () => this.#leases.close().catch(() => {}),
      () => this.#source.close(),
      () => this.#sandboxes.close(),
      async () => this.#ownChecker?.close(),
      () => this.#store.close(),
    ]);
  }

  /** Starts executing a run unless it executes already; how it stops is reported to the waiters. */
  #execute(run: RunRecord, toolset: LoadedToolset): void {
    // Looked up and registered without an await: two resumes (or a resume and a start) can never run one run twice.
    if (this.#executors.has(run.id)) return;
    const executor = new RunExecutor(run, toolset, {
      store: this.#store,
      sandboxes: this.#sandboxes,
      source: this.#source,
      clock: this.#clock,
      limits: this.#limits,
      observe: (tool, value) => this.#observe(toolset.id, tool, value),
      createWebhook: (runId, name) => this.#createWebhook(runId, name),
      onDecisionNeeded: (runId, wait) => this.#emit(decisionEvent(runId, wait)),
      workflows: this.#children,
      recordEvents: this.#recordEvents,
    });
    const stopped = this.#leases
      .claim(run)
      .then((claimed) => {
        if (!claimed) executor.stop(new EngineError("conflict", `Run ${run.id} is held by another live process; it goes on there.`));
        return executor.execute();
      })
      .then(
        (result) => {
          this.#executors.delete(run.id);
          if (result.status === "waiting") {
            // Kept while this engine wakes runs, so requests from other processes come here.
            if (this.#wakeMode === false) void this.#leases.release(run.id).catch(() => {});
            this.#waiters.report(run.id, result);
            this.#emit({ type: "run.waiting", runId: run.id, waits: result.waits, ...(result.wakeAt === undefined ? {} : { wakeAt: result.wakeAt }) });
            this.#wake?.schedule(result.wakeAt);
            // Under a virtual clock a parked child no longer drives time: its caller looks again.
            if (this.#clock.virtual) this.#tellCaller(run.caller, run.id);
          } else {
            // The store cleared the lease with the end; this engine forgets it.
            void this.#leases.release(run.id).catch(() => {});
            this.#report(run.id, result, run.caller);
          }
        },
        async (error: unknown) => {
          this.#executors.delete(run.id);
          // Counted against the run (host-faults.ts): the fault that reaches the limit fails it now, by executing it once more.
          const faults = this.#closed || !countsAsHostFault(error) ? 0 : await this.#store.noteHostFault(run.id, describeFault(error)).catch(() => 0);
          if (faults === MAX_HOST_FAULTS) return this.#execute(run, toolset);
          // Left `running` for `resume`, by this engine or another: released before anyone hears of it.
          if (!this.#closed) await this.#leases.release(run.id).catch(() => {});
          this.#waiters.fail(run.id, error);
        },
      );
    this.#executors.set(run.id, { executor, stopped });
  }

  /** Executes a run left `running` by an engine that stopped, unless it executes here or a live process holds it. */
  async #resumeStopped(run: RunRecord): Promise<void> {
    if (run.status !== "running" || this.#executors.has(run.id) || this.#leases.heldElsewhere(run) || this.#closed) return;
    const loaded = await this.#toolset(run.toolsetId);
    this.#checkHostTools(loaded.pinned);
    this.#execute(run, loaded);
  }

  /** A start answered by the run its idempotency key names: its `end` is as `end()` gives it, awaited here for a run another engine executes. */
  #existing(runId: string): StartResult {
    const end = this.end(runId).then((ended) => ended ?? this.#waiters.end(runId));
    // Like every waiter: nobody may await it, and the engine may close under it.
    end.catch(() => {});
    return { kind: "started", runId, warnings: [], end, existing: true };
  }

  #report(runId: string, end: RunEnd, caller?: RunCaller): void {
    this.#waiters.report(runId, end);
    this.#emit({ type: "run.ended", runId, end });
    this.#tellCaller(caller, runId);
  }

  /** A workflow's child run ended (or parked under a virtual clock): the run that started it looks again. */
  #tellCaller(caller: RunCaller | undefined, childId: string): void {
    if (caller === undefined || this.#closed) return;
    // Its end also woke the caller in the store (`RunPatch.wakeRun`): this is the prompt path.
    this.#notify(caller.runId, { kind: "child", runId: childId }).catch((error: unknown) => this.#emit({ type: "engine.error", error }));
  }

  #emit(event: EngineEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's fault is its own; the engine goes on.
      }
    }
  }

  /** Marks a parked run running again and executes it (once, however many ask at the same time). */
  #unpark(runId: string): Promise<void> {
    const waking = this.#waking.get(runId);
    if (waking) return waking;
    const unparked = (async () => {
      const run = await this.#run(runId);
      if (run.status !== "waiting" || this.#executors.has(runId)) return;
      const loaded = await this.#toolset(run.toolsetId);
      this.#checkHostTools(loaded.pinned);
      // Claimed before it is marked running: a run another process holds is left to it.
      if (!(await this.#leases.claim(run))) return;
      const decisions = (run.waits ?? []).filter(needsDecision);
      await this.#store.append(runId, [], { status: "running", updatedAt: this.#clock.now(), wakeAt: null, waits: decisions.length > 0 ? decisions : null });
      this.#execute({ ...run, status: "running" }, loaded);
    })().finally(() => this.#waking.delete(runId));
    this.#waking.set(runId, unparked);
    return unparked;
  }

  /** Wakes the parked runs whose timers are due; resolves with the next `wakeAt`. */
  async #wakeDue(now: number): Promise<number | undefined> {
    const owner = this.#wakeMode === "owned" ? this.#leases.owner : undefined;
    const skipped = new Set<string>();
    // Runs another live process holds are its to wake; this engine looks again when their lease would lapse.
    let retryAt: number | undefined;
    for (;;) {
      const due = (await this.#store.listRuns({ wakeBy: now, limit: 500, ...(owner ? { owner } : {}) })).filter(
        (run) => !this.#executors.has(run.id) && !skipped.has(run.id),
      );
      if (due.length === 0) break;
      for (const run of due) {
        if (this.#closed) return undefined;
        if (this.#leases.heldElsewhere(run)) {
          skipped.add(run.id);
          retryAt = Math.min(retryAt ?? Infinity, this.#clock.now() + Math.max(1, (run.owner?.until ?? 0) - Date.now()));
          continue;
        }
        await this.#unpark(run.id).catch((error: unknown) => this.#emit({ type: "engine.error", error }));
        if (this.#waking.has(run.id) || (!this.#executors.has(run.id) && (await this.#run(run.id)).status === "waiting")) skipped.add(run.id);
      }
    }
    const next = await this.#store.nextWakeAt({ after: now, ...(owner ? { owner } : {}) });
    return next === undefined ? retryAt : Math.min(next, retryAt ?? Infinity);
  }

  /** A request another process left for a run this engine holds: applied as if made here. */
  async #applyRequest(runId: string, request: RunRequest): Promise<void> {
    switch (request.kind) {
      case "signal":
      case "child":
        await this.#notify(runId, request);
        return;
      case "decide":
        await this.#decide(runId, request.seq, request.decision, request.reason);
        return;
      case "cancel":
        await this.cancel(runId, request.reason);
    }
  }

  /**
   * Something a run may be waiting for happened: a signal was kept for it, or a child run it
   * started ended. A live execution looks for it; a run parked on it wakes. Resolves with the
   * holder, when another process holds the run.
   */
  async #notify(
    runId: string,
    event: { readonly kind: "signal"; readonly name: string } | { readonly kind: "child"; readonly runId: string },
  ): Promise<string | undefined> {
    for (let live = this.#executors.get(runId); live; live = this.#executors.get(runId)) {
      if (event.kind === "signal" ? live.executor.notifySignal(event.name) : live.executor.notifyChild(event.runId)) return undefined;
      await live.stopped; // parking: look again once it is parked
    }
    const run = await this.#run(runId);
    if (terminalStatuses.includes(run.status)) return undefined;
    if (this.#leases.heldElsewhere(run)) {
      // The process holding the run looks again (takes the signal from the store, reads the child) when it reads this request.
      await this.#store.putRunRequest(runId, event, this.#clock.now());
      return run.owner?.id;
    }
    const waitsFor = (wait: RunWait) =>
      event.kind === "signal" ? wait.kind === "signal" && wait.name === event.name : wait.kind === "child" && wait.runId === event.runId;
    if (run.status === "waiting" && run.waits?.some(waitsFor)) await this.#unpark(runId);
    return undefined;
  }

  async #decide(runId: string, seq: number, decision: Decision, reason: string | undefined): Promise<{ readonly heldBy?: string }> {
    this.#open();
    for (;;) {
      let live = this.#executors.get(runId);
      if (!live) {
        const run = await this.#run(runId);
        if (!(run.waits ?? []).some((wait) => wait.seq === seq && needsDecision(wait))) {
          throw new EngineError(
            "conflict",
            `Call #${seq} of run ${runId} is not waiting for a decision${terminalStatuses.includes(run.status) ? ` (the run has ended: ${run.status})` : ""}.`,
          );
        }
        if (this.#leases.heldElsewhere(run)) {
          // The process holding the run journals the decision when it reads this request.
          await this.#store.putRunRequest(runId, { kind: "decide", seq, decision, ...(reason === undefined ? {} : { reason }) }, this.#clock.now());
          return run.owner?.id === undefined ? {} : { heldBy: run.owner.id };
        }
        if (run.status === "waiting") await this.#unpark(runId);
        else this.#execute(run, await this.#toolset(run.toolsetId));
        live = this.#executors.get(runId);
        if (!live) {
          // Another process took the run between the read and the claim: ask it.
          if (this.#leases.heldElsewhere(await this.#run(runId))) continue;
          throw new EngineError("conflict", `Run ${runId} could not be woken here to decide on call #${seq}.`);
        }
      }
      if (await live.executor.decide(seq, decision, reason)) return {};
      await live.stopped;
    }
  }

  async #createWebhook(runId: string, name: string): Promise<string> {
    const token = randomBytes(24).toString("base64url");
    await this.#store.putWebhook({ tokenHash: hashToken(token), runId, name, createdAt: this.#clock.now() });
    return `${this.#webhookBaseUrl}/hooks/${token}`;
  }

  /** How a run's record says it ended, if it did. */
  async #recordedEnd(run: RunRecord): Promise<RunEnd | undefined> {
    if (run.status === "completed") return { status: "completed", output: run.output ?? null };
    if (run.status === "failed" && run.error) return { status: "failed", error: run.error };
    if (run.status === "cancelled") {
      const [last] = await this.#store.readJournal(run.id, Math.max(0, run.journalLength - 1));
      return { status: "cancelled", reason: last?.kind === "run.cancelled" ? last.reason : "cancelled" };
    }
    return undefined;
  }

  #checkHostTools(toolset: PinnedToolset): void {
    const host = toolset.tools.filter((t) => t.source === "host");
    if (host.length === 0 || this.#hostTools === undefined) {
      if (host.length > 0 && !this.#source.has("host")) {
        throw new EngineError(
          "misconfigured",
          `The toolset has host tools (${host.map((t) => `${t.group}.${t.name}`).join(", ")}) but this engine has no host tool implementations: pass a host module (--host ./tools.ts).`,
        );
      }
      return;
    }
    const missing = this.#hostTools.missing(host);
    if (missing.length > 0) {
      throw new EngineError(
        "misconfigured",
        `The host module does not implement ${missing.join(", ")}: export { <group>: { <name>: async (args, ctx) => result } } for every host tool of the toolset.`,
      );
    }
  }

  async #toolset(id: string): Promise<ToolsetEntry> {
    const cached = this.#toolsets.get(id);
    if (cached) return cached;
    const pinned = await this.#store.getToolset(id);
    if (!pinned) throw new EngineError("not_found", `No toolset ${id}. Register it first (tapedeck toolset register <file>).`);
    return this.#load(pinned, await this.#store.getObservedShapes(id));
  }

  /** Stores a toolset `#load` just cached; if the store refuses it, it is not kept in the cache either. */
  async #put(pinned: PinnedToolset): Promise<void> {
    try {
      await this.#store.putToolset(pinned);
    } catch (error) {
      this.#toolsets.delete(pinned.id);
      throw error;
    }
  }

  #load(pinned: PinnedToolset, observed: Record<string, JsonSchema>, validator = new ArgsValidator()): ToolsetEntry {
    const cached = this.#toolsets.get(pinned.id);
    if (cached) return cached;
    if (pinned.servers) this.#mcp.addServers(pinned.servers);
    // Keyed by group names: `constructor` or `toString` is a group like any other.
    const groups: Record<string, string[]> = nullObject();
    for (const tool of importableTools(pinned.tools)) (groups[tool.group] ??= []).push(tool.name);
    const loaded = {
      id: pinned.id,
      pinned,
      byPath: new Map(pinned.tools.map((t) => [`${t.group}.${t.name}`, t])),
      groups,
      features: scriptFeatures(pinned.tools),
      validator,
      workflows: pinned.workflows ?? {},
      declarations: renderDeclarations(pinned.tools, observed, pinned.workflows),
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
    entry.declarations = renderDeclarations(entry.pinned.tools, entry.observed, entry.pinned.workflows);
    // Not part of any run's journal: losing it in a crash only delays a better declaration.
    this.#store.putObservedShape(toolsetId, path, shape).catch(() => {});
  }

  async #run(id: string): Promise<RunRecord> {
    const run = await this.#store.getRun(id);
    if (!run) throw new EngineError("not_found", `No run ${id}.`);
    return run;
  }

  #checks(): ScriptCheck {
    // Its threads load TypeScript (a second) at the first check: only commands that check scripts pay for it.
    if (this.#checker === undefined) this.#checker = this.#ownChecker = new CheckerPool();
    return this.#checker;
  }

  async #checkScript(source: string, declarations: ScriptDeclarations, options: CheckOptions): Promise<CheckResult> {
    const tooLarge = scriptSizeDiagnostic(source);
    if (tooLarge !== undefined) return { ok: false, diagnostics: [tooLarge] };
    try {
      return await this.#checks().check(source, declarations, options);
    } catch (error) {
      if (!(error instanceof CheckTimeoutError)) throw error;
      return { ok: false, diagnostics: [{ line: 1, column: 1, code: "check-timeout", category: "error", message: error.message, frame: "" }] };
    }
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closed.");
  }
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The size of `value` as JSON, or undefined if it is not JSON. */
function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : Buffer.byteLength(text);
  } catch {
    return undefined;
  }
}

/** W3C `traceparent`: version 00, a trace id and a parent id, neither all zeros. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

function checkTraceparent(value: string): string {
  if (typeof value !== "string" || !TRACEPARENT.test(value)) {
    throw new EngineError(
      "invalid_request",
      `traceparent must be a W3C trace context such as "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" (lower-case hex, not all zeros); got ${JSON.stringify(String(value).slice(0, 80))}.`,
    );
  }
  return value;
}
