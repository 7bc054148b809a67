/**
 * The agent tools' handlers (seed 001): each turns a model's tool call into client calls and
 * the answer into text for the model (`model-text.ts`). They run over any `Tapedeck` client,
 * HTTP or embedded, so the server enforces every scope.
 *
 * Invariants:
 * - The model's tool call id, hashed with the agent's labels, is the idempotency key of what a
 *   call starts or sends (`run_script`, `retry_run`, `signal_run`): handling one tool call twice
 *   starts one run or delivers one signal; agents with other labels never share a key.
 * - Every run started carries the agent's labels; a run id without them is answered as a run
 *   that does not exist.
 * - The model's mistakes (bad input, a refused script, a missing run, a run that ended) come
 *   back as `isError` text; faults of the platform or the harness (unreachable, 401, 5xx) throw.
 */
import { parseDuration, terminalStatuses, type Diagnostic, type JournalEntry, type UserToolGrantsSpec } from "@tapedeck/protocol";
import type { Labels, Run } from "@tapedeck/protocol/api";
import type { Tapedeck } from "../client.js";
import { TapedeckError } from "../errors.js";
import type { AgentToolResult, ToolCallContext } from "./adapter-types.js";
import { agentToolKey } from "./agent-key.js";
import { checkText, entryText, refusedText, runListText, runText, type ModelText } from "./model-text.js";
import { beyondCeiling, type ToolGrantsOptions } from "./grant-ceiling.js";
import { beyondText, savedToolText } from "./save-tool-text.js";
import { searchText } from "./search-text.js";
import { testReportText } from "./test-report-text.js";
import { DEFAULT_OUTPUT_LIMIT } from "./text-limits.js";
import type { AgentToolInputs, AgentToolName } from "./tool-definitions.js";
import { parseToolInput } from "./tool-input.js";

export interface AgentToolsOptions {
  /** The toolset scripts import from `tapedeck:tools`. Default: an empty toolset (built-ins only); `search_tools` and `save_workflow` need one. */
  readonly toolset?: string;
  /** Set on every run the model starts; they scope `list_runs` and the run ids the tools accept. Default: none. */
  readonly labels?: Labels;
  /** The tools offered. Default: all. */
  readonly tools?: readonly AgentToolName[];
  /** How long `run_script`, `retry_run` and `cancel_run` wait for the run to end: "30s", or ms. Default "30s". */
  readonly wait?: string | number;
  /** The longest `wait` the model may ask for. Default "2m". */
  readonly maxWait?: string | number;
  /** The TTL of the runs the model starts. Default "30d". */
  readonly ttl?: string | number;
  /** The most of a run's output one result holds, UTF-8 bytes of its JSON text. Default 256 KiB. */
  readonly outputLimit?: number;
  /**
   * The W3C trace context of the LLM call that wrote the script, or a function that returns the
   * current one: the runs the model starts (and retries) join that trace. Default: none.
   */
  readonly traceparent?: string | (() => string | undefined);
  /**
   * Offers `save_tool` (sandboxed tools the model writes): what the model may grant them without
   * asking (`ceiling`), and who approves a tool that asks for more (`approve`). Default: not
   * offered (unless named in `tools`, and then every grant needs an approval).
   */
  readonly toolGrants?: ToolGrantsOptions;
}

/** The server holds a `GET /v1/runs/:id?wait=` at most this long; longer waits are several. */
const SERVER_WAIT_SECONDS = 60;
/** The last journal entries read for a run's text (logs, the trace up to a failure). */
const JOURNAL_TAIL = 300;
/** `search_tools` answers this many declarations. */
const SEARCH_HITS = 5;

type Handlers = { readonly [N in AgentToolName]: (input: AgentToolInputs[N], context: ToolCallContext) => Promise<AgentToolResult> };

export class AgentToolHandlers {
  readonly #client: Tapedeck;
  readonly #labels: Labels;
  readonly #waitSeconds: number;
  readonly #maxWaitSeconds: number;
  readonly #ttlMs: number;
  readonly #outputLimit: number;
  #toolset: string | undefined;
  #toolsetChecked = false;
  readonly #traceparent: AgentToolsOptions["traceparent"];
  readonly #toolGrants: ToolGrantsOptions;

  constructor(client: Tapedeck, options: AgentToolsOptions) {
    this.#client = client;
    this.#labels = options.labels ?? {};
    // Checked here, not by the server on the model's first call: a bad option is the harness's fault.
    this.#waitSeconds = parseDuration(options.wait ?? "30s", "agentTools: wait") / 1000;
    this.#maxWaitSeconds = parseDuration(options.maxWait ?? "2m", "agentTools: maxWait") / 1000;
    this.#ttlMs = parseDuration(options.ttl ?? "30d", "agentTools: ttl");
    this.#outputLimit = options.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
    this.#toolset = options.toolset;
    this.#traceparent = options.traceparent;
    this.#toolGrants = options.toolGrants ?? {};
  }

  /** `{ traceparent }` of the LLM call now, for a start or a fork; empty without one. */
  #trace(): { traceparent?: string } {
    const traceparent = typeof this.#traceparent === "function" ? this.#traceparent() : this.#traceparent;
    return traceparent === undefined ? {} : { traceparent };
  }

  /** The toolset the tools use now (a derived one once `save_workflow` saved a workflow). */
  get toolset(): string | undefined {
    return this.#toolset;
  }

  get waitSeconds(): number {
    return this.#waitSeconds;
  }

  get maxWaitSeconds(): number {
    return this.#maxWaitSeconds;
  }

  /** Runs tool `name` (one of the agent tools) with the model's input. */
  async handle(name: AgentToolName, input: unknown, context: ToolCallContext): Promise<AgentToolResult> {
    const parsed = parseToolInput(name, input);
    if (!parsed.ok) return { content: parsed.message, isError: true };
    try {
      return await (this.#handlers[name] as (input: unknown, context: ToolCallContext) => Promise<AgentToolResult>)(parsed.input, context);
    } catch (error) {
      const mistake = modelMistake(error);
      if (mistake === undefined) throw error;
      return { content: mistake, isError: true };
    }
  }

  readonly #handlers: Handlers = {
    run_script: async ({ code, input, wait }, { toolCallId }) => {
      const started = await this.#client.runs.start({
        toolset: await this.#toolsetId(),
        source: code,
        ...(input === undefined ? {} : { input }),
        labels: this.#labels,
        ttl: this.#ttlMs,
        ...this.#trace(),
        idempotencyKey: await agentToolKey(this.#labels, "run_script", toolCallId),
      });
      if (started.kind === "refused") return text(refusedText(started.diagnostics));
      return this.#answer(started.run, this.#wait(wait, this.#waitSeconds), started.warnings);
    },

    check_script: async ({ code }) => text(checkText(await this.#client.check({ toolset: await this.#toolsetId(), source: code }))),

    test_script: async ({ code, scenario }) => {
      // The recorded calls of a run are the agent's only if the run is: one without its labels does not exist for it.
      const fromRun = scenario.from_run;
      if (typeof fromRun === "string" && (await this.#run(fromRun, 0)) === undefined) return missing(fromRun, "scenario.from_run");
      return text(testReportText(await this.#client.test({ toolset: await this.#toolsetId(), source: code, scenario }), this.#outputLimit));
    },

    get_run: async ({ run_id, entry, offset, wait }) => {
      const run = await this.#run(run_id, this.#wait(wait, 0));
      if (run === undefined) return missing(run_id);
      if (entry !== undefined) return { ...text(entryText(run.id, await this.#client.runs.entry(run.id, entry), this.#outputLimit)), run };
      if (offset !== undefined && run.status === "completed") {
        const page = await this.#client.runs.output(run.id, { offset, limit: this.#outputLimit });
        return { ...text(runText(run, { page, offset, outputLimit: this.#outputLimit })), run };
      }
      return this.#describe(run, wait);
    },

    list_runs: async ({ status }) => {
      const runs = await this.#client.runs.list({ labels: this.#labels, ...(status === undefined ? {} : { status }), limit: 50 });
      return text(runListText(runs));
    },

    signal_run: async ({ run_id, name, payload }, { toolCallId }) => {
      const run = await this.#run(run_id, 0);
      if (run === undefined) return missing(run_id);
      const sent = await this.#client.runs.signal(run.id, {
        name,
        ...(payload === undefined ? {} : { payload }),
        idempotencyKey: await agentToolKey(this.#labels, "signal_run", toolCallId),
      });
      const what = sent.duplicate
        ? `The signal "${name}" was already sent to run ${run.id} by this tool call; it was not sent again.`
        : `Sent the signal "${name}" to run ${run.id}.`;
      return { content: `${what} Follow the run with get_run({ run_id: ${JSON.stringify(run.id)}, wait: ${this.#maxWaitSeconds} }).`, isError: false, run };
    },

    cancel_run: async ({ run_id }) => {
      const run = await this.#run(run_id, 0);
      if (run === undefined) return missing(run_id);
      if (terminalStatuses.includes(run.status)) {
        return {
          content: `Run ${run.id} has already ended (${run.status}): there is nothing to cancel. get_run({ run_id: ${JSON.stringify(run.id)} }) shows how it ended.`,
          isError: true,
          run,
        };
      }
      await this.#client.runs.cancel(run.id, { reason: "cancelled by the agent (cancel_run)" });
      return this.#answer(run, this.#waitSeconds, []);
    },

    retry_run: async ({ run_id, code }, { toolCallId }) => {
      const parent = await this.#run(run_id, 0);
      if (parent === undefined) return missing(run_id);
      const forked = await this.#client.runs.fork(parent.id, {
        source: code,
        ttl: this.#ttlMs,
        ...this.#trace(),
        idempotencyKey: await agentToolKey(this.#labels, "retry_run", toolCallId),
      });
      if (forked.kind === "refused") return text(refusedText(forked.diagnostics));
      return this.#answer(forked.run, this.#waitSeconds, forked.warnings);
    },

    search_tools: async ({ query }) => {
      if (this.#toolset === undefined)
        return { content: "search_tools needs the agent's toolset, and these agent tools were made without one.", isError: true };
      return text(searchText(query, await this.#client.toolsets.search(this.#toolset, query, { limit: SEARCH_HITS })));
    },

    save_workflow: async ({ name, description, code, input, output, signals }) => {
      if (this.#toolset === undefined)
        return { content: "save_workflow needs the agent's toolset, and these agent tools were made without one.", isError: true };
      const saved = await this.#client.toolsets.saveWorkflow(await this.#toolsetId(), {
        name,
        description,
        code,
        input,
        output,
        ...(signals === undefined ? {} : { signals }),
      });
      if (saved.kind === "refused") return text(refusedText(saved.diagnostics));
      // The derived toolset pins the workflow: every later call of these tools uses it.
      this.#toolset = saved.id;
      const lines = saved.declarations.prompt.split("\n").filter((line) => line.startsWith(`workflows.${name}.`));
      return {
        content: [
          `Saved the workflow ${name}. Scripts you run from now on can use it:`,
          ...lines,
          `Start it with workflows.${name}.start(input), which answers { id, result() }; result() waits for its output (the run holds nothing meanwhile).`,
        ].join("\n"),
        isError: false,
      };
    },

    save_tool: async ({ group, name, description, code, inputSchema, outputSchema, capabilities, limits, tests }) => {
      if (this.#toolset === undefined) return { content: "save_tool needs the agent's toolset, and these agent tools were made without one.", isError: true };
      const grants = (capabilities ?? {}) as UserToolGrantsSpec;
      const beyond = beyondCeiling(grants, this.#toolGrants.ceiling);
      if (beyond.length > 0) {
        const approve = this.#toolGrants.approve;
        if (approve === undefined) return text(beyondText(group, name, beyond, false));
        if (!(await approve({ group, name, description, grants, beyond }))) return text(beyondText(group, name, beyond, true));
      }
      const saved = await this.#client.toolsets.saveTool(await this.#toolsetId(), {
        group,
        name,
        description,
        code,
        inputSchema,
        ...(outputSchema === undefined ? {} : { outputSchema }),
        ...(capabilities === undefined ? {} : { capabilities: grants }),
        ...(limits === undefined ? {} : { limits }),
        ...(tests === undefined ? {} : { tests: tests as never }),
      });
      // The derived toolset pins the tool: every later call of these tools uses it.
      if (saved.saved && saved.id !== undefined) this.#toolset = saved.id;
      return text(savedToolText(group, name, saved));
    },
  };

  /**
   * The toolset scripts run against: the agent's (checked once: a toolset that does not exist
   * is the harness's mistake, thrown, not the model's), or an empty one (content-addressed, so
   * registering it again is free).
   */
  async #toolsetId(): Promise<string> {
    if (this.#toolset === undefined) this.#toolset = (await this.#client.toolsets.create({})).id;
    else if (!this.#toolsetChecked)
      await this.#client.toolsets.get(this.#toolset).catch((error: unknown) => {
        if (TapedeckError.is(error) && error.status === 404)
          throw new TypeError(`agentTools: the toolset ${this.#toolset} does not exist, or is outside this client's scope: ${error.message}`);
        throw error;
      });
    this.#toolsetChecked = true;
    return this.#toolset;
  }

  /** `requested` seconds (the model's), at most `maxWait`; the tool's default when not given. */
  #wait(requested: number | undefined, fallback: number): number {
    return Math.min(Math.max(0, requested ?? fallback), this.#maxWaitSeconds);
  }

  /** The run, waited for up to `waitSeconds`, if it exists and carries the agent's labels. */
  async #run(runId: string, waitSeconds: number): Promise<Run | undefined> {
    let run: Run;
    try {
      run = await this.#client.runs.get(runId, waitSeconds > 0 ? { wait: Math.min(waitSeconds, SERVER_WAIT_SECONDS) } : {});
    } catch (error) {
      if (TapedeckError.is(error) && error.status === 404) return undefined;
      throw error;
    }
    if (!Object.entries(this.#labels).every(([key, value]) => run.labels[key] === value)) return undefined;
    return this.#waitMore(run, waitSeconds - Math.min(waitSeconds, SERVER_WAIT_SECONDS));
  }

  /**
   * Waits on, a server's longest hold at a time, for a run still going by itself: running, or
   * parked only on sleeps and workflow children. A run that waits for someone (a signal, an
   * approval, a parked call) is answered at once: the model or the harness must act.
   */
  async #waitMore(run: Run, seconds: number): Promise<Run> {
    const deadline = Date.now() + seconds * 1000;
    for (let left = seconds; left > 0 && goesOnByItself(run) && !sleepsPast(run, deadline); left = (deadline - Date.now()) / 1000) {
      // `next` only for a run parked now (to wait out its sleep): a running run is held until it ends
      // or parks, so a park on a long sleep answers at once instead of holding until its wake.
      run = await this.#client.runs.get(run.id, { wait: Math.max(1, Math.min(Math.ceil(left), SERVER_WAIT_SECONDS)), next: run.status === "waiting" });
    }
    return run;
  }

  /** A run just started (or cancelled), waited for, as the model reads it. */
  async #answer(run: Run, waitSeconds: number, warnings: readonly Diagnostic[]): Promise<AgentToolResult> {
    const waited = await this.#waitMore(await this.#client.runs.get(run.id), waitSeconds);
    const journal = await this.#journalTail(waited);
    return { ...text(runText(waited, { journal, outputLimit: this.#outputLimit, waited: waitSeconds, maxWait: this.#maxWaitSeconds, warnings })), run: waited };
  }

  async #describe(run: Run, wait: number | undefined): Promise<AgentToolResult> {
    const journal = await this.#journalTail(run);
    return {
      ...text(
        runText(run, {
          journal,
          outputLimit: this.#outputLimit,
          maxWait: this.#maxWaitSeconds,
          ...(wait === undefined ? {} : { waited: this.#wait(wait, 0) }),
        }),
      ),
      run,
    };
  }

  /** The run's last journal entries: its logs, its end, the calls up to a failure. */
  async #journalTail(run: Run): Promise<readonly JournalEntry[]> {
    const page = await this.#client.runs.journal(run.id, { from: Math.max(0, run.journalLength - JOURNAL_TAIL), limit: JOURNAL_TAIL });
    return page.entries;
  }
}

/** Whether the run only sleeps, and wakes after `deadline`: waiting for it would hold the model for nothing (the text says when it wakes). */
function sleepsPast(run: Run, deadline: number): boolean {
  const waits = run.waits ?? [];
  return run.status === "waiting" && run.wakeAt !== undefined && run.wakeAt > deadline && waits.length > 0 && waits.every((wait) => wait.kind === "sleep");
}

/** Whether the run will end or change without anyone acting: running, or parked on sleeps and children only. */
function goesOnByItself(run: Run): boolean {
  if (run.status === "running") return true;
  return run.status === "waiting" && (run.waits ?? []).length > 0 && (run.waits ?? []).every((wait) => wait.kind === "sleep" || wait.kind === "child");
}

function text(model: ModelText): AgentToolResult {
  return { content: model.text, isError: model.isError };
}

function missing(runId: string, where?: string): AgentToolResult {
  return {
    content: `There is no run ${JSON.stringify(runId)} in this conversation${where === undefined ? "" : ` (${where})`}. list_runs shows the runs you started.`,
    isError: true,
  };
}

/**
 * The text for an error the model caused and can fix (the server's 4xx answers to what it
 * asked: a bad request, a missing run or entry, a conflict such as signalling a run that
 * ended); undefined for faults of the platform or the harness, which are thrown.
 */
function modelMistake(error: unknown): string | undefined {
  if (!TapedeckError.is(error)) return undefined;
  if (error.status === 400 || error.status === 404 || error.status === 409 || error.status === 422) return error.message;
  // Over a quota, or too much sent: the model can wait, or send less; the harness has nothing to fix.
  if (error.status === 429 || error.status === 413) return refusedNowText(error);
  return undefined;
}

/** A 429 or 413 as the model reads it: what was refused and what to do. */
export function refusedNowText(error: TapedeckError): string {
  if (error.status === 413) return `Refused: ${error.message} Nothing was started or sent.`;
  const wait = error.retryAfterSeconds === undefined ? "later" : `in ${error.retryAfterSeconds} s`;
  return `Refused (over a quota, nothing was started): ${error.message} Try again ${wait}, or do the work in fewer runs.`;
}
