/**
 * The engine: the one entry point of everything a run goes through (toolsets, checks, starts,
 * forks, waits and their decisions, tests, credentials), over a store, a sandbox factory and the
 * tool sources. It is the public facade: it checks what it is given and hands the work to the
 * parts that own it — `toolset/toolset-catalog.ts` (loaded toolsets, observed shapes, the
 * checker), `runs/run-scheduler.ts` (which runs execute, wake and park, leases, waiters),
 * `runs/create-run.ts`, `testing/…` (test_script) — see docs/design/engine.md.
 *
 * Invariants:
 * - Every public method of an open engine either does what it says or throws an `EngineError`
 *   saying what to do; a closed engine throws `closed`.
 * - A run is created only from a script that type-checked against its toolset, with a toolset
 *   this engine can serve (`ToolsetCatalog.checkSources`).
 */
import { purgeRuns, type PurgeOptions, type PurgeResult } from "./runs/purge-runs.js";
import { eraseNamespace, type EraseOptions, type EraseResult } from "./runs/erase-namespace.js";
import { join } from "node:path";
import { decisionEvent, needsDecision, runBudgetProblems } from "@tapedeck/protocol";
import type { DecisionWait, JournalEntry, JsonValue, PinnedToolset, PinnedWorkflow, RunBudget, RunEnd } from "@tapedeck/protocol";
import { namespaceError } from "@tapedeck/protocol/api";
import { systemClock, VirtualClock, type Clock } from "./clock.js";
import { EngineError } from "./errors.js";
import {
  HOLD_WAIT_MS,
  LOG_LINE_CHARS,
  MAX_ATTEMPTS,
  MAX_JOURNAL_ENTRIES,
  BUDGET_MAX_CALLS,
  BUDGET_MAX_CHILD_RUNS,
  BUDGET_MAX_RESULT_BYTES,
  MAX_VALUE_BYTES,
  RUN_CONCURRENCY,
  SANDBOX_CPU_MS_PER_STEP,
  SANDBOX_MEMORY_BYTES,
  SANDBOX_STACK_BYTES,
} from "./limits.js";
import { MemoryBlobStore } from "./store/blob-store.js";
import { APPROVAL_EXPIRY_MS } from "./direct/direct-session.js";
import { DirectSessionHost } from "./direct/direct-session-host.js";
import { isSessionId } from "./direct/session-journal.js";
import { DIRECT_CALL_ARGS_PURPOSE, DIRECT_SIGNING_PURPOSE, purposeKey, SENSITIVE_PARAMS_PURPOSE } from "./secrets/purpose-key.js";
import { createRun } from "./runs/create-run.js";
import { EngineListeners, type EngineEvent } from "./runs/engine-events.js";
import type { ExecutionResult, ExecutorLimits, RunPause } from "./runs/run-executor.js";
import { RunScheduler } from "./runs/run-scheduler.js";
import { verifyReplay, type VerifyResult } from "./runs/verify-replay.js";
import { hashToken } from "./runs/webhooks.js";
import { QuickJsSandboxFactory } from "./sandbox/quickjs-sandbox-factory.js";
import type { SandboxFactory, SandboxPool } from "./sandbox/sandbox.js";
import type { ScriptCheck } from "./script/checker-pool.js";
import type { CheckResult, Diagnostic } from "./script/diagnostic.js";
import { vaultResolver } from "./secrets/credential-resolver.js";
import { savedToolCredentialProblems } from "./user-tools/saved-tool-credentials.js";
import { MasterKeySource } from "./secrets/master-key.js";
import { CredentialVault } from "./secrets/vault.js";
import { HttpToolSource } from "./sources/http/http-tool-source.js";
import { McpToolSource } from "./sources/mcp/mcp-tool-source.js";
import { LibraryToolSource } from "./library/library-tool-source.js";
import { probeShell, type ShellSetup } from "./library/shell/shell-probe.js";
import { SourceRouter } from "./sources/source-router.js";
import type { ToolSource } from "./sources/tool-source.js";
import { openStore } from "./store/open-store.js";
import type { RunQuery, RunRecord, Store } from "./store/store.js";
import { parseScenario, ScenarioError, type Scenario } from "./testing/scenario.js";
import { ScenarioLibrarySource } from "./testing/scenario-library-source.js";
import { ScenarioSource } from "./testing/scenario-source.js";
import { cassetteOf, runTest, type CassetteDocument, type TestReport } from "./testing/test-script.js";
import type { Declarations } from "./toolset/declarations.js";
import { schemaToType } from "./toolset/schema-to-type.js";
import { ToolsetCatalog, type RegisterToolsetOptions } from "./toolset/toolset-catalog.js";
import { ToolSearch, type ToolSearchHit, type ToolSearchOptions } from "./toolset/tool-search.js";
import { closeAll } from "./util/close-all.js";
import { valueProblem } from "./util/value-bounds.js";
import { userToolProblems } from "./user-tools/check-user-tools.js";
import { ceilingsProblems, DEFAULT_USER_TOOL_CEILINGS, type UserToolLimits } from "./toolset/user-tool-limits.js";
import { saveUserTool, type SaveToolOptions, type ToolTestResult } from "./user-tools/save-tool.js";
import { UserToolSource } from "./user-tools/user-tool-source.js";
import { workspaceFolder } from "./library/library-folder.js";
import { admitInvocation } from "./runs/invocation-admission.js";
import { Schedules } from "./schedules/schedules.js";
import { ScheduleFirer } from "./schedules/schedule-firer.js";
import type { ScheduleHost, FireStart } from "./schedules/schedule-host.js";
import type { ScheduleOptions } from "./schedules/schedule-options.js";
import { SCHEDULE_LABEL } from "./schedules/fire-key.js";
import type { ScheduleRecord } from "./store/schedule-store.js";
import { deriveWithWorkflow, pinWorkflow, WorkflowSpecError, type SaveWorkflowOptions } from "./workflows/workflow-spec.js";

/** Limits of runs; every field has a default (see `limits.ts` for why). */
export type EngineLimits = ExecutorLimits;

/**
 * Where the engine sends calls, by the source of their tool. Each has a default but `host`.
 */
export interface EngineSources {
  /**
   * Host tools: their implementations, run in this process (`new InProcessHostTools(module)`,
   * `--host ./tools.ts`), or a source of your own (the server's queue for workers). Default none:
   * a run of a toolset with host tools is then refused (`misconfigured`).
   */
  readonly host?: ToolSource;
  /**
   * MCP tools. An `McpToolSource` is also the MCP client layer that lists servers' tools when a
   * toolset is registered (pass one to choose its options); any other `ToolSource` only answers
   * the calls (a mock), and registration then uses an `McpToolSource` of the engine's own.
   * Default: an `McpToolSource` that reads credentials from this engine's vault.
   */
  readonly mcp?: ToolSource;
  /** The built-in `http` tool (`fetch` in scripts). Default: an `HttpToolSource` that reads credentials from this engine's vault. */
  readonly builtin?: ToolSource;
  /**
   * The built-in tool library's groups a toolset enables (`library`). A `LibraryToolSource` also
   * says, when a toolset is registered, which groups this engine can serve; any other `ToolSource`
   * only answers the calls. Default: a `LibraryToolSource` on `EngineOptions.libraryFolder`.
   */
  readonly library?: ToolSource;
  /** Sandboxed user tools (`userTools` of a toolset file). Default: a `UserToolSource` on this engine's sandboxes, vault and sources. */
  readonly user?: ToolSource;
}

export interface EngineOptions {
  /**
   * Where runs are kept: a data folder or a store URL, opened with `openStore` (a folder: SQLite
   * in `<folder>/tapedeck.db`, durability `full`; `memory:`: in memory), or a store already
   * opened (`openStore(location, { durability })` for another durability). The engine closes it
   * on `close()`. Default `"./.tapedeck"`.
   */
  readonly store?: string | Store;
  /** Where calls go, by the source of their tool (see `EngineSources`). The engine closes them on `close()`. */
  readonly sources?: EngineSources;
  /** Default: QuickJS in 2 worker threads. */
  readonly sandboxes?: SandboxFactory;
  /** Default: the system clock. */
  readonly clock?: Clock;
  readonly limits?: Partial<Omit<EngineLimits, "sandbox" | "budget">> & {
    readonly sandbox?: Partial<EngineLimits["sandbox"]>;
    readonly budget?: Partial<EngineLimits["budget"]>;
  };
  /**
   * Which parked runs this engine wakes when their timers are due: `true` (default), every run
   * of the store, from the moment the engine opens (overdue ones at once) — a server; `"owned"`,
   * only runs this engine holds (it parked them itself) — a CLI command keeping its run; `false`,
   * none — an engine that only inspects. An engine that wakes runs keeps holding the runs it
   * parks, so signals and decisions sent from other processes reach it.
   */
  readonly wake?: boolean | "owned";
  /**
   * The ceilings on every per-tool limit of user tools (`limits.fuel`, `deadlineMs`,
   * `memoryBytes`, …): a toolset (or `save_tool`) whose tool asks for more is refused, naming the
   * ceiling. Fields not given keep `DEFAULT_USER_TOOL_CEILINGS` (2 min, 256 MiB, 1e6 fuel, …).
   */
  readonly userToolCeilings?: Partial<UserToolLimits>;
  /** Where the run-bound webhook URLs point: the server that serves `POST /hooks/<token>`. Default `http://127.0.0.1:7700`. */
  readonly webhookBaseUrl?: string;
  /**
   * Checks and transpiles scripts, off the engine's event loop; share one with other engines
   * (each loads TypeScript, which takes a second). Default: a `CheckerPool` of the engine's own
   * (two worker threads, started at the first check), closed with the engine.
   */
  readonly checker?: ScriptCheck;
  /**
   * TESTS ONLY, never in production: lets the default `http` tool source reach loopback addresses
   * (127.0.0.0/8, ::1), so a test can serve an allowed host on a local server. Every other refused
   * range stays refused and the allow-list still applies. Default false. Only this option turns it
   * on; no toolset file can. (A `sources.builtin` of your own has options of its own.)
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
   * Where the built-in library keeps workspaces (files, shell: one per namespace) and the memory
   * index (see `sources/library/library-folder.ts`). Default: `library` in the store's data folder;
   * for a store without one (in memory, a database URL), none: toolsets enabling files, shell or
   * memory are then refused with what to do.
   */
  readonly libraryFolder?: string;
  /**
   * The library shell's sandbox: what each command may use (`limits`: memory 256 MiB per process,
   * files 64 MiB, /tmp 64 MiB, 256 processes, 1024 open files, 600 s of CPU by default) and, for an
   * engine running as root, the host uid and gid commands run as (`user`, default 65534:65534).
   * See `library/shell/shell-limits.ts`.
   */
  readonly shell?: ShellSetup;
  /** How long a direct tool call waits for a human before the model is told its approval expired. Default 24 hours. */
  readonly approvalExpiryMs?: number;
  /** Direct tool sessions are evicted from memory (and read again from their journals) after `idleMs` unused (default 10 minutes), or beyond `maxOpen` live (default 1000). */
  readonly directSessions?: { readonly idleMs?: number; readonly maxOpen?: number };
  /**
   * Write every run event (parked, ended, decision needed) into the store in the commit that
   * makes it happen, to be read with `Store.pendingEvents` and removed by its reader: the server
   * sets it so that its webhooks miss no event across a crash. Default false (nothing would
   * remove the rows). Listeners (`on`) hear events either way.
   */
  readonly recordEvents?: boolean;
  /**
   * How long a run's lease holds without renewal, ms (renewed every third of it). Engines sharing
   * a store (several nodes on one PostgreSQL) take over the runs of one that stops renewing once
   * its lease lapses: shorter means a quicker takeover after a crash, and a stalled event loop or
   * lost database connection of about that long losing its runs to another engine. Default 30 s.
   */
  readonly leaseMs?: number;
  /**
   * Fire schedules (`engine.schedules`) on this engine's clock: claim each due fire in the store
   * and start its run. `tapedeck serve` sets it; several engines may (each fire starts once).
   * Default false: tests and one-shot processes (the CLI) do not fire.
   */
  readonly fireSchedules?: boolean;
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

/** The engine's own library source: on `libraryFolder` (or the data folder's `library/`), web pages fetched under the `http` tool's rules without credentials. */
function libraryOf(options: EngineOptions, store: Store, clock: Clock): LibraryToolSource {
  const folder = libraryFolderOf(options, store);
  const http = new HttpToolSource({ unsafeAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true });
  const shell = options.shell;
  return new LibraryToolSource({
    store,
    clock,
    http,
    ownsHttp: true,
    ...(folder === undefined ? {} : { folder }),
    ...(shell === undefined ? {} : { shell: () => probeShell(shell) }),
  });
}

/** Where the library's workspaces and memory index are: `libraryFolder`, else `library/` in the store's data folder, else nowhere. */
function libraryFolderOf(options: EngineOptions, store: Store): string | undefined {
  return options.libraryFolder ?? (store.dataFolder === undefined ? undefined : join(store.dataFolder, "library"));
}

/** Where the store (and so the master key file) is when none is given: a data folder. */
const DEFAULT_DATA_DIR = ".tapedeck";

/** A test run's journal is bounded lower than a real run's: a script looping in virtual time fails fast. */
const TEST_MAX_JOURNAL_ENTRIES = 50_000;

export type { EngineEvent };

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

export type { RegisterToolsetOptions, SaveWorkflowOptions };

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

export type { SaveToolOptions, ToolTestResult };

export type SaveToolResult =
  /** Nothing was saved: `problems` by field, `diagnostics` of the code, `tests` with the failing cases and what differed. */
  | { readonly kind: "refused"; readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[]; readonly tests: readonly ToolTestResult[] }
  /** The derived toolset that pins the tool: its new id, and its declarations. */
  | {
      readonly kind: "saved";
      readonly id: string;
      readonly toolset: PinnedToolset;
      readonly declarations: Declarations;
      readonly tests: readonly ToolTestResult[];
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
  /** This run's budget, field by field over its toolset's and the engine's (`limits.budget`): past it the run fails `budget_exceeded`. */
  readonly budget?: RunBudget;
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
  budget: { maxCalls: BUDGET_MAX_CALLS, maxResultBytes: BUDGET_MAX_RESULT_BYTES, maxChildRuns: BUDGET_MAX_CHILD_RUNS },
};

/**
 * The engine: registers toolsets, checks scripts, starts, executes and resumes runs. Everything
 * the CLI and the server do goes through here. It knows nothing of HTTP.
 */
export class Engine {
  readonly #store: Store;
  /** Credentials, sealed in the store; the `http` tool injects them (`secrets/vault.ts`). */
  readonly credentials: CredentialVault;
  readonly #sandboxes: SandboxFactory;
  readonly #source: SourceRouter;
  readonly #clock: Clock;
  readonly #limits: EngineLimits;
  /** The ceilings on user tools' limits (`EngineOptions.userToolCeilings` over the defaults). */
  readonly #userToolCeilings: UserToolLimits;
  readonly #webhookBaseUrl: string;
  readonly #listeners = new EngineListeners();
  readonly #catalog: ToolsetCatalog;
  readonly #scheduler: RunScheduler;
  /** Schedules: workflows and scripts started on a cron expression or an interval (`schedules/schedules.ts`). */
  readonly schedules: Schedules;
  readonly #firer: ScheduleFirer | undefined;
  /** Direct tool mode: sessions of model tool calls, each journaled like a run (`direct/direct-sessions.ts`). */
  readonly direct: DirectSessionHost;
  /** Closes what the sources do not: an MCP client layer of the engine's own when a mock answers MCP calls. */
  readonly #closeExtra: readonly (() => Promise<unknown>)[];
  /** The engine's library source: `test_script`'s library converts pages with its converter (one pool of threads per engine). */
  readonly #library: LibraryToolSource;
  #closed = false;

  private constructor(options: EngineOptions, store: Store) {
    this.#store = store;
    this.#sandboxes = options.sandboxes ?? new QuickJsSandboxFactory();
    const keyFile = options.masterKeyFile ?? (store.dataFolder === undefined ? undefined : join(store.dataFolder, "master.key"));
    const keys = new MasterKeySource(keyFile === undefined ? {} : { keyFile });
    this.credentials = new CredentialVault(store.credentials, keys);
    const given = options.sources ?? {};
    // The MCP client layer lists servers' tools at registration; an MCP source given in the
    // options keeps its own credentials (its options decide). A stdio server that stops on its
    // own is reported with its last stderr lines (the server logs engine errors).
    const mcp =
      given.mcp instanceof McpToolSource
        ? given.mcp
        : new McpToolSource({
            credentials: vaultResolver(store, this.credentials),
            log: (message) => this.#listeners.emit({ type: "engine.error", error: new Error(message) }),
          });
    this.#clock = options.clock ?? systemClock;
    const library = given.library instanceof LibraryToolSource ? given.library : libraryOf(options, store, this.#clock);
    this.#library = library;
    this.#source = new SourceRouter({
      ...(given.host ? { host: given.host } : {}),
      mcp: given.mcp ?? mcp,
      // `http.fetch`; it opens no connection until a run calls `fetch`.
      builtin:
        given.builtin ??
        new HttpToolSource({
          unsafeAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true,
          credentials: vaultResolver(store, this.credentials),
        }),
      library: given.library ?? library,
      user: given.user ?? this.#userTools(options, store),
    });
    this.#closeExtra = [
      ...(given.mcp !== undefined && given.mcp !== mcp ? [() => mcp.close()] : []),
      ...(given.library !== library ? [() => library.close()] : []),
    ];
    this.#limits = {
      ...DEFAULT_LIMITS,
      ...options.limits,
      sandbox: { ...DEFAULT_LIMITS.sandbox, ...options.limits?.sandbox },
      budget: { ...DEFAULT_LIMITS.budget, ...options.limits?.budget },
    };
    this.#webhookBaseUrl = (options.webhookBaseUrl ?? "http://127.0.0.1:7700").replace(/\/+$/, "");
    const ceilings = (this.#userToolCeilings = { ...DEFAULT_USER_TOOL_CEILINGS, ...options.userToolCeilings });
    const wrongCeilings = ceilingsProblems(options.userToolCeilings ?? {});
    if (wrongCeilings.length > 0) throw new Error(`EngineOptions.userToolCeilings is wrong: ${wrongCeilings.join("; ")}.`);
    this.#catalog = new ToolsetCatalog({
      store,
      mcp,
      library,
      sources: this.#source,
      userToolProblems: (toolset, checker) => userToolProblems(toolset, checker, ceilings),
      sensitiveKey: purposeKey(keys, SENSITIVE_PARAMS_PURPOSE),
      ...(options.checker ? { checker: options.checker } : {}),
    });
    this.#scheduler = new RunScheduler({
      store,
      clock: this.#clock,
      sandboxes: this.#sandboxes,
      source: this.#source,
      limits: this.#limits,
      catalog: this.#catalog,
      wake: options.wake ?? true,
      recordEvents: options.recordEvents === true,
      webhookBaseUrl: this.#webhookBaseUrl,
      emit: (event) => this.#listeners.emit(event),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
    this.credentials.onSet((scope, name) => this.#scheduler.credentialSet(scope, name));
    this.direct = new DirectSessionHost({
      store,
      clock: this.#clock,
      source: this.#source,
      toolset: (id) => this.#catalog.get(id),
      checkSources: (pinned) => this.#catalog.checkSources(pinned),
      limits: this.#limits,
      recordEvents: options.recordEvents === true,
      workflowSchemas: this.#scheduler.workflowSchemas,
      signingKey: purposeKey(keys, DIRECT_SIGNING_PURPOSE),
      blobs: store.directBlobs ?? new MemoryBlobStore(),
      callArgsKey: purposeKey(keys, DIRECT_CALL_ARGS_PURPOSE),
      approvalExpiryMs: options.approvalExpiryMs ?? APPROVAL_EXPIRY_MS,
      ...(options.directSessions === undefined ? {} : { eviction: options.directSessions }),
      leases: this.#scheduler.leases,
      onError: (error) => this.#listeners.emit({ type: "engine.error", error }),
      onDecisionNeeded: (sessionId, wait) => this.#listeners.emit(decisionEvent(sessionId, wait)),
    });
    const firing = this.#scheduleHost(store);
    this.#firer = firing === undefined ? undefined : new ScheduleFirer(firing, options.fireSchedules === true);
    this.schedules = new Schedules(firing, this.#firer, { check: (scheduled) => this.#checkScheduled(scheduled) });
    this.#scheduler.serveSessions({ owns: isSessionId, decide: (runId, seq, decision, reason) => this.direct.decideById(runId, seq, decision, reason) });
  }

  /** What the schedules need of this engine, when its store keeps schedules. */
  #scheduleHost(store: Store): ScheduleHost | undefined {
    if (store.schedules === undefined) return undefined;
    return {
      schedules: store.schedules,
      runs: store,
      clock: this.#clock,
      holder: this.#scheduler.leases.owner,
      start: (schedule, fireAt, key) => this.#startFire(schedule, fireAt, key),
      cancel: (runId, reason) => this.cancel(runId, reason),
      emit: (event) => this.#listeners.emit(event),
    };
  }

  /** Starts a fire's run with its key; what would fail again the same way is `refused`, a fault of the store is thrown. */
  async #startFire(schedule: ScheduleRecord, fireAt: number, key: string): Promise<FireStart> {
    const { action } = schedule;
    try {
      let source = action.source;
      if (action.workflow !== undefined) {
        const workflows = (await this.#catalog.get(action.toolset)).pinned.workflows ?? {};
        source = Object.hasOwn(workflows, action.workflow) ? workflows[action.workflow]!.source : undefined;
        if (source === undefined) return { kind: "refused", reason: `The toolset ${action.toolset} pins no workflow ${action.workflow}.` };
      }
      const started = await this.start({
        toolset: action.toolset,
        source: source!,
        input: action.input,
        labels: { ...schedule.labels, [SCHEDULE_LABEL]: schedule.id },
        ...(schedule.namespace === undefined ? {} : { namespace: schedule.namespace }),
        idempotencyKey: key,
        ...(action.ttlMs === undefined ? {} : { ttlMs: action.ttlMs }),
      });
      if (started.kind === "refused") {
        return {
          kind: "refused",
          reason: `The script no longer type-checks: ${started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("; ")}`,
        };
      }
      return { kind: "started", runId: started.runId, existing: started.existing };
    } catch (error) {
      if (EngineError.is(error) && error.code !== "closed") return { kind: "refused", reason: error.message };
      throw error;
    }
  }

  /** What is wrong with starting a schedule's workflow or script. Throws `not_found` for an unknown toolset. */
  async #checkScheduled(options: ScheduleOptions): Promise<{ problems: string[]; diagnostics: Diagnostic[] }> {
    const loaded = await this.#catalog.get(options.toolset);
    if (options.workflow !== undefined) {
      const workflows = loaded.pinned.workflows ?? {};
      const workflow = Object.hasOwn(workflows, options.workflow) ? workflows[options.workflow] : undefined;
      if (!workflow) return { problems: [`The toolset ${options.toolset} pins no workflow ${options.workflow}.`], diagnostics: [] };
      const problems = this.#scheduler.workflowSchemas.problems(workflow.input, options.input ?? null);
      return { problems: (problems ?? []).map((problem) => `input: ${problem}`), diagnostics: [] };
    }
    const checked = await this.check(options.source!, loaded.id);
    return { problems: [], diagnostics: checked.ok ? [] : [...checked.diagnostics] };
  }

  /** The default source of user tools: their sandboxes are the runs', their host calls go through this engine's vault and sources. */
  #userTools(options: EngineOptions, store: Store): UserToolSource {
    // A user tool granted a workspace sees the same files as the library's `files` tools.
    const folder = libraryFolderOf(options, store);
    return new UserToolSource({
      sandboxes: this.#sandboxes,
      clock: options.clock ?? systemClock,
      compile: (code) => this.#catalog.compile(code),
      context: async (runId) => {
        const run = await this.#scheduler.run(runId);
        const toolset = await this.#catalog.get(run.toolsetId);
        return { tools: toolset.byPath, validator: toolset.validator, ...(run.namespace === undefined ? {} : { namespace: run.namespace }) };
      },
      send: (request) => this.#source.call(request),
      resumes: (call) => this.#source.resumes(call),
      admit: (call) => admitInvocation(call, store, options.clock ?? systemClock),
      credentials: vaultResolver(store, this.credentials),
      ...(folder === undefined ? {} : { workspaceFolder: (namespace: string | undefined) => workspaceFolder(folder, namespace) }),
      http: { unsafeAllowLoopbackForTests: options.unsafeHttpAllowLoopbackForTests === true },
    });
  }

  /** Opens an engine on its store (`options.store`, by default the data folder `./.tapedeck`). */
  static async open(options: EngineOptions = {}): Promise<Engine> {
    const store = typeof options.store === "object" ? options.store : await openStore(options.store ?? DEFAULT_DATA_DIR);
    const engine = new Engine(options, store);
    await engine.#scheduler.open();
    engine.#firer?.open();
    return engine;
  }

  /** Listens to the engine's events; returns a function that stops listening. */
  on(listener: (event: EngineEvent) => void): () => void {
    return this.#listeners.on(listener);
  }

  /**
   * Checks and pins a toolset file's content, saves it, and returns its id and declarations.
   * `options.override` changes how the tools of an MCP server (by group) are pinned.
   */
  async registerToolset(spec: unknown, options: RegisterToolsetOptions = {}): Promise<RegisteredToolset> {
    this.#open();
    const { toolset, warnings } = await this.#catalog.register(spec, options);
    return { id: toolset.id, toolset: toolset.pinned, declarations: toolset.declarations, warnings };
  }

  /** A registered toolset and its declarations. Throws `not_found`. */
  async toolset(id: string): Promise<RegisteredToolset> {
    const loaded = await this.#catalog.get(id);
    return { id, toolset: loaded.pinned, declarations: loaded.declarations };
  }

  /**
   * The toolset's tools that best match `query` (BM25 over groups, names, descriptions and
   * parameters), best first, with their declarations (`search_tools`). Throws `not_found` for an
   * unknown toolset, `invalid_request` for a query with no words or a bad limit.
   */
  async searchTools(toolsetId: string, query: string, options: ToolSearchOptions = {}): Promise<readonly ToolSearchHit[]> {
    return ToolSearch.of((await this.#catalog.get(toolsetId)).pinned).search(query, options);
  }

  /** Type-checks a script against a toolset's declarations (off the event loop); a script past `MAX_SCRIPT_BYTES` is refused unchecked. */
  async check(source: string, toolsetId: string): Promise<CheckResult> {
    return this.#catalog.check(source, await this.#catalog.get(toolsetId));
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
    const base = await this.#catalog.get(options.toolset);
    let workflow: PinnedWorkflow;
    try {
      workflow = pinWorkflow(options, base.pinned, this.#scheduler.workflowSchemas);
    } catch (error) {
      if (error instanceof WorkflowSpecError) throw new EngineError(error.kind, error.message);
      throw error;
    }
    const contract = { input: schemaToType(workflow.input, { style: "ts" }), output: schemaToType(workflow.output, { style: "ts" }) };
    const checked = await this.#catalog.check(workflow.source, base, contract);
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const pinned = deriveWithWorkflow(base.pinned, options.name, workflow);
    // The derived toolset has the base's tools: it starts with what was observed of their results.
    const observed = { ...base.observed, ...(await this.#store.getObservedShapes(pinned.id)) };
    const loaded = this.#catalog.load(pinned, observed, base.validator);
    await this.#catalog.put(pinned, options.owner);
    return { kind: "saved", id: pinned.id, toolset: pinned, declarations: loaded.declarations, warnings: checked.diagnostics };
  }

  /**
   * `save_tool`: checks a user tool (its fields, its code against what it is granted), runs its
   * test cases in the sandbox in virtual time (nothing is sent), and registers the toolset
   * derived from `options.toolset` that pins it: new runs on the derived id see it, running runs
   * keep theirs. Whatever is wrong comes back `refused` (problems, diagnostics, failing cases).
   * Throws `not_found` for an unknown toolset.
   */
  async saveTool(options: SaveToolOptions): Promise<SaveToolResult> {
    this.#open();
    const base = await this.#catalog.get(options.toolset);
    const saved = await saveUserTool(options, base.pinned, {
      checker: this.#catalog.checker,
      sandboxes: this.#sandboxes,
      now: this.#clock.now(),
      ceilings: this.#userToolCeilings,
    });
    if (saved.kind === "refused") return saved;
    const tool = saved.toolset.tools.find((t) => t.group === options.group && t.name === options.name)!;
    const beyond = await savedToolCredentialProblems(tool, base.id, this.#store, this.credentials);
    if (beyond.length > 0) return { kind: "refused", problems: beyond, diagnostics: [], tests: saved.tests };
    const observed = { ...base.observed, ...(await this.#store.getObservedShapes(saved.toolset.id)) };
    const loaded = this.#catalog.load(saved.toolset, observed);
    await this.#catalog.put(saved.toolset, options.owner);
    return { kind: "saved", id: saved.toolset.id, toolset: saved.toolset, declarations: loaded.declarations, tests: saved.tests, warnings: saved.warnings };
  }

  /** Checks the script and, if it type-checks, creates a run and starts executing it. */
  async start(options: StartOptions): Promise<StartResult> {
    this.#open();
    const misspelt = options.namespace === undefined || options.namespace === "" ? undefined : namespaceError(options.namespace, "The run's namespace");
    if (misspelt !== undefined) throw new EngineError("invalid_request", misspelt);
    const key = options.idempotencyKey;
    const first = key === undefined ? undefined : await this.#store.getRunByIdempotencyKey(key, options.namespace === "" ? undefined : options.namespace);
    if (first) return this.#existing(first.id);
    if (options.ttlMs !== undefined && !(options.ttlMs > 0 && Number.isFinite(options.ttlMs)))
      throw new EngineError("invalid_request", `A run's ttl must be a positive number of milliseconds, not ${options.ttlMs}.`);
    const inputProblem = options.input === undefined ? undefined : valueProblem(options.input);
    if (inputProblem !== undefined) throw new EngineError("invalid_request", `The run's input is refused: ${inputProblem}.`);
    const loaded = await this.#catalog.get(options.toolset);
    if (options.budget !== undefined) checkStartBudget(options.budget, loaded.byPath);
    this.#catalog.checkSources(loaded.pinned);
    const checked = await this.check(options.source, options.toolset);
    if (!checked.ok) return { kind: "refused", diagnostics: checked.diagnostics };
    const compiled = await this.#catalog.compile(options.source);
    const created = await createRun(this.#store, this.#clock, {
      toolsetId: loaded.id,
      source: options.source,
      compiled,
      input: options.input ?? null,
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.parentId ? { parentId: options.parentId } : {}),
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...(options.ttlMs === undefined ? {} : { expires: { afterMs: options.ttlMs } }),
      ...(options.traceparent === undefined ? {} : { traceparent: checkTraceparent(options.traceparent) }),
      ...(options.budget === undefined ? {} : { budget: options.budget }),
    });
    // A start with the same key committed first (while this one was checked): its run is the answer.
    if (created.kind === "duplicate") return this.#existing(created.runId);
    const end = this.#scheduler.start(created.run, loaded);
    return { kind: "started", runId: created.run.id, warnings: checked.diagnostics, end, existing: false };
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
    const parent = await this.#scheduler.run(options.parent);
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
    return this.#scheduler.resume(runId);
  }

  /**
   * Cancels a run that has not ended: `run.cancelled` is journaled and the run becomes
   * `cancelled`; calls in flight are abandoned and their late results ignored. A run that has
   * ended is left as it is: its end is returned.
   */
  cancel(runId: string, reason = "cancelled"): Promise<RunEnd> {
    return this.#scheduler.cancel(runId, reason);
  }

  /**
   * How a run ended. A run executing or parked in this engine is waited for (across parks, as
   * long as this engine wakes it). Undefined for a run left `running` by another engine.
   */
  end(runId: string): Promise<RunEnd | undefined> {
    return this.#scheduler.end(runId);
  }

  /**
   * The run's end, or what it waits for, at once if it is parked, else at its next end or park.
   * With `next`, a parked run is waited for too: its next end or park after it wakes in this
   * engine. Undefined for a run left `running` by another engine.
   */
  settled(runId: string, options: { readonly next?: boolean } = {}): Promise<ExecutionResult | undefined> {
    return this.#scheduler.settled(runId, options);
  }

  /**
   * Sends the signal `name` to a run. It is kept until a `signal(name)` call of the run takes
   * it (each signal is taken once, oldest first); a run parked on it wakes. With a `key` used
   * before for this run, nothing is sent again (`duplicate`). `heldBy`: another live process
   * holds the run and takes the signal there (within a fraction of a second).
   */
  signal(
    runId: string,
    name: string,
    payload: JsonValue = null,
    options: { readonly key?: string } = {},
  ): Promise<{ readonly signalId: number; readonly duplicate: boolean; readonly heldBy?: string }> {
    return this.#scheduler.signal(runId, name, payload, options);
  }

  /**
   * Approves a call waiting for approval (or parked): the decision is journaled, then the call is
   * sent with its key. `heldBy`: another live process holds the run and decides there. `unsent`:
   * this engine lacks a source the run needs (host tools, and no host module), so the decision is
   * journaled and the call is sent by the process that next holds the run (a server wakes a
   * parked run at once; a direct session's next request opens it); the text says what is missing.
   * Such an engine never fails a call for want of its source.
   */
  approve(runId: string, seq: number, options: { readonly reason?: string } = {}): Promise<{ readonly heldBy?: string; readonly unsent?: string }> {
    return this.#scheduler.decide(runId, seq, "approved", options.reason);
  }

  /** Rejects a call waiting for approval (or parked): the decision is journaled; the script gets a `ToolError` (`approval_rejected`, `schema_changed` for a parked call). */
  reject(runId: string, seq: number, options: { readonly reason?: string } = {}): Promise<{ readonly heldBy?: string; readonly unsent?: string }> {
    return this.#scheduler.decide(runId, seq, "rejected", options.reason);
  }

  /** Calls waiting for a decision, oldest run first: of one run, or of every run matching `query`. */
  async pendingDecisions(
    query: { readonly runId?: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>>; readonly limit?: number } = {},
  ): Promise<PendingDecision[]> {
    const runs = query.runId
      ? [await this.#scheduler.run(query.runId)]
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
    const loaded = await this.#catalog.get(options.toolset);
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
      // Built-ins too: a test's `fetch` is answered by the scenario, never sent. The library's
      // computed groups run on the virtual clock; the others are mocked like any tool.
      sources: {
        host: source,
        mcp: source,
        builtin: source,
        library: new ScenarioLibrarySource(source, new LibraryToolSource({ store, clock, http: source, html: this.#library.html })),
        user: source,
      },
      wake: false,
      checker: this.#catalog.checker,
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
    await this.#scheduler.run(runId);
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
    const run = await this.#scheduler.run(runId);
    const loaded = await this.#catalog.get(run.toolsetId);
    const entries = await this.#store.readJournal(runId);
    return verifyReplay(run, loaded, entries, this.#sandboxes, this.#limits.sandbox);
  }

  /** The runs executing in this engine now (not parked ones). */
  executing(): string[] {
    return this.#scheduler.executingRuns();
  }

  /** A run's record. Throws `not_found`. */
  async getRun(id: string): Promise<RunRecord> {
    return this.#scheduler.run(id);
  }

  listRuns(query?: RunQuery): Promise<RunRecord[]> {
    return this.#store.listRuns(query);
  }

  /**
   * Deletes the runs that ended before `options.before` (and the direct sessions unused since
   * then) with everything kept of them, in bounded batches; a dry run counts. Never a run that
   * has not ended, nor one whose workflow relative is alive (`store/purge-store.ts`).
   */
  purgeRuns(options: PurgeOptions): Promise<PurgeResult> {
    this.#open();
    return purgeRuns(this.#store.purge, options);
  }

  /**
   * Erases an end user: deletes every run and direct session of `namespace` with everything kept
   * of them, its namespace credentials, rate-limit windows, host tasks and schedules, its library
   * workspace and memory documents, in bounded batches, then compacts the SQLite files so the
   * bytes are gone. Refuses (`conflict`, deleting nothing) while a run of it has not ended,
   * unless `cancel`; a dry run counts. See `runs/erase-namespace.ts`.
   */
  eraseNamespace(namespace: string, options: EraseOptions = {}): Promise<EraseResult> {
    this.#open();
    return eraseNamespace(
      {
        store: this.#store.erase,
        cancel: (runId, reason) => this.cancel(runId, reason),
        releaseSessions: (ns, force) => this.direct.releaseNamespace(ns, force),
        countLibrary: (ns) => this.#library.countNamespace(ns),
        eraseLibrary: (ns) => this.#library.eraseNamespace(ns),
      },
      namespace,
      options,
    );
  }

  /** A page of a run's journal. */
  async journal(runId: string, from = 0, limit = 1000): Promise<JournalEntry[]> {
    await this.#scheduler.run(runId);
    return this.#store.readJournal(runId, from, limit);
  }

  /** The sandbox pool's size now (workers, sandboxes open), for metrics; undefined for a factory without a pool. */
  sandboxPool(): SandboxPool | undefined {
    return this.#sandboxes.pool?.();
  }

  /**
   * Stops: runs still executing stop where they are (they stay `running`, to be resumed, and
   * their `end` rejects with a `closed` error), then everything is closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await closeAll([
      () => this.#firer?.close() ?? Promise.resolve(),
      () => this.direct.close(),
      () => this.#scheduler.close(),
      () => this.#source.close(),
      ...this.#closeExtra,
      () => this.#sandboxes.close(),
      () => this.#catalog.close(),
      () => this.#store.close(),
    ]);
  }

  /** A start answered by the run its idempotency key names: its `end` is as `end()` gives it, awaited here for a run another engine executes. */
  #existing(runId: string): StartResult {
    return { kind: "started", runId, warnings: [], end: this.#scheduler.existing(runId), existing: true };
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closed.");
  }
}

/** A start's budget, refused with every wrong field named (and each per-tool limit's tool one of the toolset's). */
function checkStartBudget(budget: RunBudget, tools: ReadonlyMap<string, unknown>): void {
  const problems = runBudgetProblems(budget);
  for (const tool of problems.length > 0 ? [] : Object.keys(budget.maxCallsPerTool ?? {}))
    if (!tools.has(tool)) problems.push(`budget.maxCallsPerTool["${tool}"] names no tool of the run's toolset; write "<group>.<name>"`);
  if (problems.length > 0) throw new EngineError("invalid_request", `The run's budget is refused: ${problems.join("; ")}.`);
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
