import { toolFailure, toolPath, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import { Workspace } from "../library/files/workspace.js";
import type { LogLine, SandboxFactory } from "../sandbox/sandbox.js";
import type { CompiledScript } from "../script/compile.js";
import type { CredentialResolver } from "../secrets/credential-resolver.js";
import type { KnownSecret } from "../secrets/leak-scanner.js";
import { HttpToolSource, type HttpToolOptions } from "../sources/http/http-tool-source.js";
import { outcomeUnknown } from "../sources/outcome-unknown.js";
import type { ResumedCall, ToolCallRequest, ToolOutcome, ToolSource } from "../sources/tool-source.js";
import { boundedAttempt } from "../sources/bounded-attempt.js";
import { pinHttpTool } from "../toolset/pin-http.js";
import { sensitiveValues } from "../toolset/redacted-args.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import { MAX_TREE_INVOCATIONS, nestingRefusal, treeBudgetRefusal } from "./invocation-nesting.js";
import { userToolSpecOf } from "./user-tool-spec.js";
import { MemorySubCallJournal, type UserToolHost } from "./user-tool-host.js";
import { userToolOf, type UserTool } from "./user-tool-registration.js";
import { UserToolRunner } from "./user-tool-runner.js";
import { WasmToolRunner } from "./wasm-tool-runner.js";

/**
 * The tool source of user tools (source `user`): each call runs the pinned tool's code in a
 * fresh sandbox (`UserToolRunner`), and every host call it makes goes through the engine's
 * seams and is journaled in the run's journal as a `call.sub` entry keyed `{run}/{seq}.{n}`
 * (`ToolCallRequest.subCalls`), so a later attempt of the call re-runs the tool against the
 * recorded answers and sends nothing for them.
 *
 * Invariants:
 * - `fetch` goes through an `http` tool source of its own: the grant's hosts are its
 *   allow-list, every hop (redirects included) is checked against the grant before it is sent
 *   (`targetCheck`), and its credential resolver injects only the credential the tool named —
 *   never one bound to the host otherwise.
 * - An invoked tool is one of the run's toolset (MCP, host, library or another user tool), its arguments validated against its schema,
 *   then admitted by its policy as a script's call would be (`admit`: approval rules and rate
 *   limit) — except that one which would wait for a human, or for its rate window, is refused (a
 *   user tool runs within its call and cannot wait); it is sent through the engine's sources
 *   with the sub-call's key (a host tool's worker sees it as the call's idempotency key). Without
 *   `admit`, a tool with approval rules or a rate limit is refused.
 * - An invoked user tool runs with this call's sub-call journal, so its own host calls are
 *   journaled under its invocation's key (`{run}/{seq}.{n}.{m}`), and with the chain of user
 *   tools it runs within: nesting past `MAX_USER_TOOL_NESTING` (a cycle) is refused.
 * - An invocation is bounded by the invoked tool's `timeout` and `queueTimeout`
 *   (`boundedAttempt`, as a script's call is): the tool gets the `timeout` or `queue_timeout`
 *   error, recorded as its answer. It is not retried on an interruption (an attempt of an
 *   invocation is its call's attempt): the tool gets a retryable error, and the next attempt of
 *   the call sends it again with the same key.
 * - An invocation of an `at_most_once` tool that is interrupted (its worker lost) answers
 *   `outcomeUnknown`, recorded: it is never sent again. A host tool's invocation that an earlier
 *   attempt of the call left standing (`resumes`) is sent as that attempt: picked up, not resent.
 * - The workspace is the namespace's, opened `ro` for a read-only grant.
 * - Code is compiled once per pinned tool (by content), never type-checked again: the toolset
 *   was refused at registration unless it type-checked.
 * - What the tool logged (bounded and scanned by its runner) goes on its outcome (`ToolOutcome.logs`),
 *   for the call's outcome entry; an invoked user tool's lines are the invoking call's too (its runner adds them, after the tool's name).
 * - Never rejects; a call whose run stopped waiting ends `interrupted`, and what it had not
 *   recorded is performed again by the next attempt.
 */

export interface UserToolSourceOptions {
  readonly sandboxes: SandboxFactory;
  readonly clock: Clock;
  /** Transpiles a tool's TypeScript (the engine's checker). */
  readonly compile: (code: string) => Promise<CompiledScript>;
  /** The toolset of run `runId` (tools by `group.name`, its validator) and the run's namespace. */
  readonly context: (runId: string) => Promise<RunContext>;
  /** Sends an invoked tool's call (the engine's sources). */
  readonly send: (request: ToolCallRequest) => Promise<ToolOutcome>;
  /**
   * Whether an attempt of an invocation that an earlier attempt of its call sent still stands
   * (`ToolSource.resumes`: a host task queued, held by a worker, or answered): then it is sent
   * as that attempt, and picked up where it is rather than sent again. Default: never.
   */
  readonly resumes?: (call: ResumedCall) => Promise<boolean> | undefined;
  /**
   * Applies an invoked tool's policy (approval rules, rate limit) to its call: the failure that
   * refuses it, or undefined to send it. Never waits: a call that would wait is refused.
   */
  readonly admit?: (call: {
    readonly tool: PinnedTool;
    readonly path: string;
    readonly args: JsonValue;
    readonly namespace: string | undefined;
  }) => Promise<ToolFailure | undefined>;
  /** Resolves a credential a tool names (the engine's vault). Default: none can be named. */
  readonly credentials?: CredentialResolver;
  /** The folder of a namespace's workspace; absent: a workspace grant cannot be served here (said at call). */
  readonly workspaceFolder?: (namespace: string | undefined) => string;
  /** Options of the `http` source its `fetch` goes through (tests: loopback, a resolver). */
  readonly http?: Omit<HttpToolOptions, "credentials">;
}

export interface RunContext {
  readonly tools: ReadonlyMap<string, PinnedTool>;
  readonly validator: SchemaValidator;
  readonly namespace?: string;
}

export class UserToolSource implements ToolSource {
  readonly #runner: UserToolRunner;
  readonly #wasm = new WasmToolRunner();
  readonly #http: HttpToolSource;
  /** By pinned tool: the catalogue keeps one object per tool of a loaded toolset. */
  readonly #compiled = new WeakMap<PinnedTool, Promise<UserTool>>();
  /** By the attempt of a call a script (or session) made (`treeKey`): the invocations made so far in its whole tree. */
  readonly #trees = new Map<string, { invoked: number }>();

  constructor(private readonly options: UserToolSourceOptions) {
    this.#runner = new UserToolRunner(options.sandboxes);
    const named = options.credentials;
    this.#http = new HttpToolSource({
      ...options.http,
      // Only a credential the tool named (its grant was checked first): no host binding otherwise.
      credentials: (runId, host, origin, name, use) =>
        name === undefined || named === undefined ? Promise.resolve({ kind: "ok" }) : named(runId, host, origin, name, use),
    });
  }

  /** Runs one call of the tool; never rejects. */
  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    // The outermost user tool of a tree counts the tree's invocations (an invoked one shares its count).
    if (request.invokedBy !== undefined) return this.#call(request);
    const key = treeKey(request);
    this.#trees.set(key, { invoked: 0 });
    try {
      return await this.#call(request);
    } finally {
      this.#trees.delete(key);
    }
  }

  async #call(request: ToolCallRequest): Promise<ToolOutcome> {
    const pinned = request.tool;
    if (pinned.user === undefined) return failed("unknown_tool", `${toolPath(pinned)} is not a user tool; the user tool source serves only user tools.`);
    if (pinned.user.wasm !== undefined) return this.#callWasm(request, pinned.user.wasm);
    let tool: UserTool;
    try {
      tool = await this.#tool(pinned);
    } catch (error) {
      return failed("tool_error", `${toolPath(pinned)} could not be compiled: ${error instanceof Error ? error.message : String(error)}.`);
    }
    const sent: KnownSecret[] = [];
    const host = await this.#host(request, tool, sent);
    if ("failure" in host) return host;
    const outcome = await this.#runner.call(tool, request.args, {
      key: request.idempotencyKey,
      signal: request.signal,
      now: () => this.options.clock.now(),
      host,
      // Every call the intake sends carries the run's journal; one made elsewhere (none today) records in memory.
      journal: request.subCalls ?? new MemorySubCallJournal(),
    });
    return concluded(request, outcome, sent);
  }

  /** A WebAssembly tool's call: the same host (grants, sub-calls, scans), through its plugin's host functions. */
  async #callWasm(request: ToolCallRequest, wasm: { readonly module: string; readonly entry: string }): Promise<ToolOutcome> {
    const spec = userToolSpecOf(request.tool, toolPath(request.tool));
    const tool = { definition: spec.definition, grants: spec.grants, limits: spec.limits, module: Buffer.from(wasm.module, "base64"), entry: wasm.entry };
    const sent: KnownSecret[] = [];
    const host = await this.#host(request, { ...tool, js: "", sourceMap: "", groups: {}, features: [], hash: "" }, sent);
    if ("failure" in host) return host;
    const outcome = await this.#wasm.call(tool, request.args, {
      key: request.idempotencyKey,
      signal: request.signal,
      now: () => this.options.clock.now(),
      host,
      journal: request.subCalls ?? new MemorySubCallJournal(),
    });
    return concluded(request, outcome, sent);
  }

  async close(): Promise<void> {
    await this.#wasm.close();
    await this.#http.close();
  }

  /** The pinned tool compiled, once per content. */
  #tool(pinned: PinnedTool): Promise<UserTool> {
    let tool = this.#compiled.get(pinned);
    if (tool === undefined) {
      const spec = userToolSpecOf(pinned, toolPath(pinned));
      tool = this.options.compile(spec.code).then((compiled) => userToolOf(spec.definition, spec.code, spec.grants, spec.limits, compiled));
      tool.catch(() => this.#compiled.delete(pinned));
      this.#compiled.set(pinned, tool);
    }
    return tool;
  }

  /** What the tool's host calls go through for this call. */
  async #host(request: ToolCallRequest, tool: UserTool, sent: KnownSecret[]): Promise<UserToolHost | (ToolOutcome & { kind: "failure" })> {
    const allow = [...new Set((tool.grants.http ?? []).map((grant) => grant.host))];
    const http = pinHttpTool(allow, {});
    let workspace: Workspace | undefined;
    if (tool.grants.workspace !== undefined) {
      const folder = this.options.workspaceFolder;
      if (folder === undefined)
        return failed("misconfigured", `${toolPath(request.tool)} is granted the workspace, and this engine has none (its store has no data folder).`);
      const { namespace } = await this.options.context(request.runId);
      try {
        workspace = await Workspace.open(folder(namespace), tool.grants.workspace);
      } catch (error) {
        return failed(
          "misconfigured",
          `${toolPath(request.tool)}'s workspace cannot be opened here: ${error instanceof Error ? error.message : String(error)}.`,
        );
      }
    }
    return {
      // The call's own sensitive values: redacted from its sub-calls' records and answers, as from its result.
      ...(request.secrets === undefined || request.secrets.length === 0 ? {} : { secrets: request.secrets }),
      fetch: async (args, key, signal, within) => {
        // `fetchOf`: a credential of a base toolset goes only where the base's own tools send it.
        const outcome = await this.#http.call({ ...this.#subRequest(request, key, signal), tool: http, args, targetCheck: within, fetchOf: request.tool });
        if (outcome.secrets !== undefined) sent.push(...outcome.secrets);
        return outcome;
      },
      invoke: (name, args, key, signal) => this.#invoke(request, name, args, key, signal, sent),
      ...(workspace === undefined ? {} : { workspace }),
    };
  }

  async #invoke(request: ToolCallRequest, name: string, args: JsonValue, key: string, signal: AbortSignal, sent: KnownSecret[]): Promise<ToolOutcome> {
    const tree = this.#trees.get(treeKey(request));
    if (tree !== undefined && ++tree.invoked > MAX_TREE_INVOCATIONS)
      return { kind: "failure", failure: treeBudgetRefusal(request.invokedBy?.[0] ?? toolPath(request.tool), toolPath(request.tool), name) };
    const context = await this.options.context(request.runId);
    const target = context.tools.get(name);
    if (target === undefined) return failed("unknown_tool", `${name} is not a tool of this run's toolset.`);
    const invalid = context.validator.validateArgs(target, args);
    if (invalid !== undefined) return { kind: "failure", failure: invalid };
    let nested: Pick<ToolCallRequest, "invokedBy" | "subCalls"> = {};
    if (target.source === "user") {
      // An invoked user tool records its own host calls in this call's journal, under its
      // invocation's key ({run}/{seq}.{n}.{m}): a later attempt of this call re-runs it against them.
      const chain = [...(request.invokedBy ?? []), toolPath(request.tool)];
      const tooDeep = nestingRefusal(chain, name);
      if (tooDeep !== undefined) return { kind: "failure", failure: tooDeep };
      nested = { invokedBy: chain, ...(request.subCalls === undefined ? {} : { subCalls: request.subCalls }) };
    }
    if (target.policy.approval)
      return failed(
        "refused",
        `${name} needs approval before each call, and ${toolPath(request.tool)} runs within one call, so it cannot wait for one; call ${name} from the script instead.`,
      );
    const { admit } = this.options;
    if (admit === undefined) {
      if (target.policy.approvalRules !== undefined || target.policy.rateLimit !== undefined)
        return failed(
          "refused",
          `${name} has approval rules or a rate limit, which this engine cannot apply to a user tool's calls; call ${name} from the script instead.`,
        );
    } else {
      const refused = await admit({ tool: target, path: name, args, namespace: context.namespace });
      if (refused !== undefined) return { kind: "failure", failure: refused };
    }
    const attempt = target.source === "host" ? await this.#standingAttempt(request, target, key) : request.attempt;
    const { signal: _own, ...sub } = this.#subRequest(request, key, signal, attempt);
    // The invoked tool's sensitive values, as the dispatcher finds a script's call's: an invoked
    // user tool keeps them out of its own sub-calls, and the answer is redacted of them below.
    const sensitive = sensitiveValues(target, args);
    // Bounded by the invoked tool's timeout and queueTimeout, as a script's call to it is.
    const bounded = boundedAttempt(
      { call: this.options.send },
      { ...sub, tool: target, args, ...nested, ...(sensitive.length === 0 ? {} : { secrets: sensitive }) },
      { clock: this.options.clock, stopped: STOPPED, stopFirst: signal.aborted ? new Error("the user tool's call stopped") : undefined },
    );
    const stop = () => bounded.stop(new Error("the user tool's call stopped"));
    signal.addEventListener("abort", stop, { once: true });
    const answered = await bounded.outcome.finally(() => signal.removeEventListener("abort", stop));
    // The answer's `secrets` are what the invoking tool's runner redacts from this answer (its
    // sub-call record and what the tool sees) and from the rest of its call: what an invoked
    // user tool's fetch sent, and the invocation's sensitive values (a tool echoing them back).
    const outcome: ToolOutcome = sensitive.length === 0 ? answered : { ...answered, secrets: [...(answered.secrets ?? []), ...sensitive] };
    if (outcome.secrets !== undefined) sent.push(...outcome.secrets);
    // An at_most_once tool whose worker was lost may have acted: that is its answer (recorded,
    // so no later attempt of this call sends it again), as the dispatcher decides for a script's call.
    if (outcome.kind === "interrupted" && target.policy.onInterruption === "at_most_once" && !signal.aborted)
      return { kind: "failure", failure: outcomeUnknown(outcome.reason) };
    return outcome;
  }

  /**
   * A host call's request: its own key, and the attempt of the call it is made within, so that a
   * host task of an invocation is one per attempt of its call (a later attempt gives up the
   * task an earlier one left, as for the call's own attempts).
   */
  #subRequest(request: ToolCallRequest, key: string, signal: AbortSignal, attempt = request.attempt): Omit<ToolCallRequest, "tool" | "args"> {
    return { runId: request.runId, seq: request.seq, idempotencyKey: key, attempt, traceparent: request.traceparent, signal };
  }

  /**
   * The attempt to send a host tool's invocation as: the latest earlier attempt of the call whose
   * task for it still stands (the engine stopped while a worker held it: the worker's answer
   * comes to this attempt, and nothing is sent twice), else the call's own.
   */
  async #standingAttempt(request: ToolCallRequest, tool: PinnedTool, key: string): Promise<number> {
    const { resumes } = this.options;
    if (resumes === undefined) return request.attempt;
    for (let attempt = request.attempt - 1; attempt >= 1; attempt--) {
      const stands = await resumes({ tool, runId: request.runId, seq: request.seq, idempotencyKey: key, attempt });
      if (stands === true) return attempt;
    }
    return request.attempt;
  }
}

/**
 * A call's outcome from its tool's result, with the credentials its host calls sent (for the leak
 * scan) and what the tool logged (the runner bounded and scanned it; the dispatcher scans it again
 * with the call's sensitive values); interrupted if the run stopped waiting.
 */
function concluded(
  request: ToolCallRequest,
  outcome: {
    readonly result: { readonly kind: "result"; readonly value: JsonValue } | { readonly kind: "failure"; readonly failure: ToolFailure };
    readonly logs: readonly LogLine[];
  },
  sent: readonly KnownSecret[],
): ToolOutcome {
  if (request.signal.aborted) return { kind: "interrupted", reason: "the run stopped waiting for this user tool call" };
  const secrets = sent.length === 0 ? {} : { secrets: [...sent] };
  // The ordinal counts the tool's lines, not the script's: it is dropped (a tool's line is no script log line).
  const logs = outcome.logs.length === 0 ? {} : { logs: outcome.logs.map((line) => ({ level: line.level, message: line.message })) };
  const { result } = outcome;
  return result.kind === "result"
    ? { kind: "result", value: result.value, ...secrets, ...logs }
    : { kind: "failure", failure: result.failure, ...secrets, ...logs };
}

/** The tree a call belongs to: the attempt of the run's call (the user tools it invokes are sent with its run, seq and attempt). */
function treeKey(request: ToolCallRequest): string {
  return `${request.runId}/${request.seq}#${request.attempt}`;
}

/** How an invocation ends when the user tool's call stops waiting for it. */
const STOPPED: ToolOutcome = { kind: "interrupted", reason: "the user tool's call stopped waiting for this invocation" };

function failed(code: string, message: string): ToolOutcome & { kind: "failure" } {
  return { kind: "failure", failure: toolFailure(code, message) };
}
