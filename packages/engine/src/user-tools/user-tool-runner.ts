import { toolFailure, type JsonValue, type ToolFailure } from "@tapedeck/protocol";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { callLibraryTool } from "../library/call-library-tool.js";
import type { ToolResult } from "../library/library-tool.js";
import { createPositionMapper, mapStack } from "../script/compile.js";
import {
  SandboxLostError,
  SandboxStoppedError,
  type GuestError,
  type IssuedCall,
  type LogLine,
  type Sandbox,
  startSandbox,
  type SandboxFactory,
  type Step,
} from "../sandbox/sandbox.js";
import { LeakScanner } from "../secrets/leak-scanner.js";
import type { ToolOutcome } from "../sources/tool-source.js";
import { CompiledSchemas } from "./compiled-schemas.js";
import { checkHttpGrant } from "./http-grant.js";
import { LIMIT_EXCEEDED, toolLimitFailure } from "./tool-limit-errors.js";
import type { SubCallAnswer, SubCallJournal, UserToolHost } from "./user-tool-host.js";
import { WORKSPACE_GROUP, WORKSPACE_TOOLS, type UserTool } from "./user-tool-registration.js";
import { workspaceRuleRefusal } from "./workspace-rules.js";

/**
 * Runs one call of a user tool: a fresh sandbox (its own QuickJS runtime, context and heap, from
 * the engine's `SandboxFactory`; created and started in one round trip, `startSandbox`) per call, driven like a script: each host call the tool makes
 * is checked against its grants, answered (from the journal when recorded, else performed and
 * recorded first), and delivered; the tool's default export's value is the call's result.
 *
 * Invariants:
 * - No capability unless granted: `fetch` exists only with an HTTP grant and goes only where the
 *   grant allows (`checkHttpGrant`, and every redirect's target before it is sent, through the
 *   request's `targetCheck`; the final URL once more); a credential only
 *   by a granted name, injected by the host after the checks; the workspace only as granted;
 *   other tools only from the allow-list. Anything else the sandbox can issue (sleep, signals,
 *   workflows) is refused: a user tool runs within its call.
 * - Each host call has its own key `{key}.{n}` (n its issue order, from 1) and its answer is
 *   recorded before anything the tool does after seeing it leaves the sandbox: the answer is
 *   delivered while its record commits, and the step it leads to (further host calls, the
 *   result) is acted on only once the record is durable. A crash in between loses only what the
 *   sandbox computed, as if it had come before the answer. A replay (the answers recorded)
 *   re-runs the tool against them and performs nothing. Answers are delivered in issue order, so
 *   the replay is exact.
 * - Limits per call are decided in issue order (also deterministic): at most `httpRequests`
 *   fetches and `toolCalls` invocations (the next are refused), `logLines` lines.
 * - Everything the tool is given (answers) and gives back (result, logs, errors) is leak-scanned:
 *   secrets are redacted with a marker, never a reason to fail the call.
 * - The call never rejects: the tool's error, a limit, a lost sandbox are each a failure.
 */

export interface UserToolCall {
  /** The parent call's idempotency key, `{run}/{seq}`: host calls are keyed under it. */
  readonly key: string;
  readonly signal: AbortSignal;
  /** The run's clock (virtual in tests). */
  readonly now: () => number;
  readonly host: UserToolHost;
  readonly journal: SubCallJournal;
}

export interface UserToolOutcome {
  readonly result: ToolResult;
  /** What the tool logged, leak-scanned, at most `logLines` lines (then one saying how many were dropped). */
  readonly logs: readonly LogLine[];
  /** Host calls the tool made. */
  readonly subCalls: number;
}

export { LIMIT_EXCEEDED };

const FILENAME = "tool.js";

export class UserToolRunner {
  readonly #schemas = new CompiledSchemas();

  constructor(private readonly sandboxes: SandboxFactory) {}

  async call(tool: UserTool, args: JsonValue, call: UserToolCall): Promise<UserToolOutcome> {
    const run = new ToolCallState(tool, call, (schema) => this.#schemas.get(schema));
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), tool.limits.deadlineMs);
    const stop = () => deadline.abort();
    call.signal.addEventListener("abort", stop, { once: true });
    let sandbox: Sandbox | undefined;
    try {
      const starting = startSandbox(this.sandboxes, {
        runId: call.key,
        js: tool.js,
        filename: FILENAME,
        tools: tool.groups,
        features: tool.features,
        input: args,
        seed: call.key,
        startedAt: call.now(),
        limits: {
          memoryBytes: tool.limits.memoryBytes,
          stackBytes: tool.limits.stackBytes,
          cpuMsPerStep: tool.limits.deadlineMs,
          logLineChars: tool.limits.logLineChars,
          fuel: tool.limits.fuel,
        },
      });
      // The deadline bounds the wait for a sandbox worker and the first step too: the call answers
      // at its deadline whatever the sandbox does (it is disposed when it comes).
      const started = await untilAborted(starting, deadline.signal);
      if (started === undefined) {
        starting.then(
          (late) => late.sandbox.dispose().catch(() => undefined),
          () => undefined,
        );
        return { result: run.timedOut(), logs: run.logs(), subCalls: run.subCalls };
      }
      sandbox = started.sandbox;
      const result = await run.drive(sandbox, started.step, deadline.signal);
      return { result, logs: run.logs(), subCalls: run.subCalls };
    } catch (error) {
      return { result: { kind: "failure", failure: lostFailure(tool, error) }, logs: run.logs(), subCalls: run.subCalls };
    } finally {
      clearTimeout(timer);
      call.signal.removeEventListener("abort", stop);
      // Past the deadline the sandbox may still be in a step (its worker frees it after): the
      // answer does not wait for that.
      const disposed = sandbox?.dispose().catch(() => undefined);
      if (!deadline.signal.aborted) await disposed;
    }
  }
}

/** One call's state: counters, the scanner (which learns the credential values fetch sent), logs. Shared by the QuickJS and the WebAssembly runners. */
export class ToolCallState {
  #scanner: LeakScanner;
  readonly #logs: LogLine[] = [];
  #droppedLogs = 0;
  #fetches = 0;
  #invocations = 0;
  /** The failures delivered to the tool, by the seq of its host call: only these may leave it as they are. */
  readonly #delivered = new Map<number, ToolFailure>();
  subCalls = 0;

  constructor(
    private readonly tool: UserTool,
    private readonly call: UserToolCall,
    private readonly validator: (schema: object) => ValidateFunction,
  ) {
    this.#scanner = new LeakScanner(call.host.secrets ?? []);
  }

  /** Runs the sandbox to its end from its first step: answers each host call in issue order. */
  async drive(sandbox: Sandbox, first: Step, deadline: AbortSignal): Promise<ToolResult> {
    const pending = new Map<number, Promise<Answer>>();
    let step = first;
    for (let next = 1; ; next++) {
      this.#absorbLogs(step.logs);
      for (const issued of step.calls) pending.set(issued.seq, this.#answer(issued, deadline));
      if (step.end !== undefined) return step.end.ok ? this.output(step.end.output) : { kind: "failure", failure: this.#error(step.end.error) };
      const answering = pending.get(next);
      if (answering === undefined) {
        return failed(
          "tool_error",
          `${this.tool.definition.name} is waiting for something that can never happen (a promise nothing resolves); its default export must resolve or throw.`,
        );
      }
      const answered = await untilAborted(answering, deadline);
      if (answered === undefined) return this.timedOut();
      pending.delete(next);
      const { answer, durable, logs } = answered;
      if (!answer.ok) this.#delivered.set(next, answer.error);
      // An invoked tool's lines join this call's as its answer is delivered: in issue order.
      this.#absorbLogs(logs);
      // Delivered while its record commits (the sandbox's work overlaps the commit); the step it
      // leads to is acted on only once the record is durable, and the deadline bounds the wait.
      const delivering = Promise.all([
        sandbox.deliverEach([
          answer.ok ? { seq: next, at: answer.at, ok: true, value: answer.value } : { seq: next, at: answer.at, ok: false, error: answer.error },
        ]),
        durable,
      ]);
      const stepped = await untilAborted(delivering, deadline);
      if (stepped === undefined) {
        // The sandbox is disposed and the commit may fail: nobody waits for either any more.
        delivering.catch(() => undefined);
        return this.timedOut();
      }
      const [[delivered]] = stepped;
      if (delivered === undefined) throw new Error(`the user tool's sandbox ended before call #${next} could be answered`);
      step = delivered;
    }
  }

  logs(): LogLine[] {
    if (this.#droppedLogs === 0) return this.#logs;
    const note = `[${this.#droppedLogs} more lines were dropped: a user tool call keeps at most ${this.tool.limits.logLines}]`;
    return [...this.#logs, { level: "warn", message: note, ordinal: this.#logs.length + this.#droppedLogs }];
  }

  /** Lines the tool logged outside a sandbox's steps (a WebAssembly tool's), kept as its `console` lines are. */
  absorb(lines: readonly LogLine[]): void {
    this.#absorbLogs(lines);
  }

  #absorbLogs(lines: readonly LogLine[]): void {
    for (const line of lines) {
      if (this.#logs.length >= this.tool.limits.logLines) this.#droppedLogs++;
      else this.#logs.push({ ...line, message: this.#scanner.scanText(line.message).value });
    }
  }

  /** The answer of one host call, once recorded (durable): refused by the limits or grants, recorded, or performed and recorded. */
  async answer(issued: IssuedCall, deadline: AbortSignal): Promise<SubCallAnswer> {
    const { answer, durable, logs } = await this.#answer(issued, deadline);
    // Host calls made one at a time (a WebAssembly tool's): an invoked tool's lines join here, in order.
    this.#absorbLogs(logs);
    await durable;
    return answer;
  }

  /** The answer of one host call as soon as it is known, and its record's commit (settled: nothing to record). */
  async #answer(issued: IssuedCall, deadline: AbortSignal): Promise<Answer> {
    this.subCalls++;
    const key = `${this.call.key}.${issued.seq}`;
    // Limits are decided at issue, in issue order: the same on a replay.
    const limited = this.#overLimit(issued.tool);
    const recorded = await this.call.journal.recorded(key);
    // A recorded answer comes without the lines its tool logged when it was performed.
    if (recorded !== undefined) return { answer: recorded, durable: DURABLE, logs: [] };
    const outcome = limited ?? (await this.#perform(issued, key, deadline));
    const logs = outcome.invokedLogs ?? [];
    const answer: SubCallAnswer =
      outcome.kind === "result"
        ? { ok: true, value: this.#scan(outcome.value), at: this.call.now() }
        : { ok: false, error: this.#scan(outcome.failure as unknown as JsonValue) as unknown as ToolFailure, at: this.call.now() };
    // No answer (interrupted, parked, the call stopped): nothing is recorded, so the parent
    // call's next attempt performs this host call again, with the same key.
    if (outcome.unanswered === true || deadline.aborted) return { answer, durable: DURABLE, logs };
    const durable = this.call.journal.record({ key, tool: issued.tool, args: this.#scan(issued.args) }, answer);
    // Awaited by whoever acts on the answer; handled here so that a failed commit of an answer
    // not yet reached (several calls in flight) is not an unhandled rejection meanwhile.
    durable.catch(() => undefined);
    return { answer, durable, logs };
  }

  #overLimit(tool: string): Answered | undefined {
    const limits = this.tool.limits;
    if (tool === "http.fetch" && ++this.#fetches > limits.httpRequests) {
      return refusal(LIMIT_EXCEEDED, `${this.tool.definition.name} made more than ${limits.httpRequests} fetch requests in one call, its limit; make fewer.`);
    }
    const [group] = tool.split(".");
    if (tool !== "http.fetch" && group !== WORKSPACE_GROUP && group !== "tapedeck" && ++this.#invocations > limits.toolCalls) {
      return refusal(
        LIMIT_EXCEEDED,
        `${this.tool.definition.name} invoked other tools more than ${limits.toolCalls} times in one call, its limit; make fewer.`,
      );
    }
    return undefined;
  }

  async #perform(issued: IssuedCall, key: string, signal: AbortSignal): Promise<Answered> {
    const { tool, args } = issued;
    const grants = this.tool.grants;
    if (tool === "http.fetch") return this.#fetch(args, key, signal);
    const dot = tool.indexOf(".");
    const group = tool.slice(0, dot);
    const name = tool.slice(dot + 1);
    if (group === WORKSPACE_GROUP && (this.tool.groups[WORKSPACE_GROUP] ?? []).includes(name)) {
      const library = WORKSPACE_TOOLS.get(name);
      const workspace = this.call.host.workspace;
      if (library === undefined || workspace === undefined) return refusal("refused", `The workspace is not available to ${this.tool.definition.name} here.`);
      const validate = this.validator(library.inputSchema);
      if (!validate(args)) return refusal("invalid_arguments", `workspace.${name}: ${this.#ajvText(validate)}`);
      const asked = workspaceRuleRefusal(name, library, args);
      if (asked !== undefined) return refusal("refused", asked);
      const outcome = await callLibraryTool(library, args, { now: this.call.now, signal, workspace });
      return outcome.kind === "result" ? { kind: "result", value: outcome.value } : outcome;
    }
    if ((grants.tools ?? []).includes(tool)) {
      const outcome = await this.call.host.invoke(tool, args, key, signal);
      // The invocation's sensitive values (and what an invoked tool's fetch sent) are redacted
      // from its answer, as recorded and as the tool sees it, and from the rest of the call.
      if (outcome.secrets !== undefined && outcome.secrets.length > 0) this.#scanner = this.#scanner.with(outcome.secrets);
      // What an invoked user tool logged is this call's too, after its name (within this call's logLines).
      const logs =
        outcome.kind !== "interrupted" && outcome.kind !== "park" && outcome.logs !== undefined
          ? outcome.logs.map((line) => ({ level: line.level, message: `${tool}: ${line.message}`, ordinal: 0 }))
          : undefined;
      return { ...settled(outcome, tool), ...(logs === undefined ? {} : { invokedLogs: logs }) };
    }
    if (group === "tapedeck") {
      return refusal(
        "refused",
        `A user tool runs within one call: it cannot ${tool.slice("tapedeck.".length)} (sleep, signals, webhooks and workflows belong to scripts).`,
      );
    }
    const granted = [...(grants.tools ?? []), ...(this.tool.groups[WORKSPACE_GROUP] ?? []).map((n) => `workspace.${n}`)];
    return refusal("refused", `${this.tool.definition.name} is not granted ${tool} (granted: ${granted.length === 0 ? "no tools" : granted.join(", ")}).`);
  }

  async #fetch(args: JsonValue, key: string, signal: AbortSignal): Promise<Answered> {
    const request = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
    const url = typeof request.url === "string" ? request.url : "";
    const method = typeof request.method === "string" ? request.method : "GET";
    const grants = this.tool.grants.http ?? [];
    const checked = checkHttpGrant(grants, url, method);
    if (!checked.ok) return refusal("refused", checked.reason);
    const credential = request.credential;
    if (credential !== undefined && !(typeof credential === "string" && (this.tool.grants.secrets ?? []).includes(credential))) {
      const granted = this.tool.grants.secrets ?? [];
      return refusal(
        "refused",
        `The credential ${JSON.stringify(credential)} is not granted to ${this.tool.definition.name} (granted: ${granted.length === 0 ? "none" : granted.join(", ")}).`,
      );
    }
    const within = (target: string, hopMethod: string): string | undefined => {
      // The first hop is the URL just checked (the same parse): only a redirect needs a new check.
      if (target === checked.url.href && hopMethod.toUpperCase() === method.toUpperCase()) return undefined;
      const hop = checkHttpGrant(grants, target, hopMethod);
      return hop.ok ? undefined : target === url ? hop.reason : `${url} redirected out of the grant. ${hop.reason}`;
    };
    const outcome = await this.call.host.fetch(args, key, signal, within);
    if (outcome.secrets !== undefined && outcome.secrets.length > 0) this.#scanner = this.#scanner.with(outcome.secrets);
    if (outcome.kind === "result") {
      const response = outcome.value as { readonly url?: unknown; readonly redirected?: unknown };
      if (response.redirected === true && typeof response.url === "string") {
        const final = checkHttpGrant(grants, response.url, method === "HEAD" ? "HEAD" : "GET");
        if (!final.ok) return refusal("refused", `${url} redirected out of the grant. ${final.reason}`);
      }
      return outcome;
    }
    return settled(outcome, `the request to ${url}`);
  }

  #scan<T extends JsonValue>(value: T): T {
    return this.#scanner.scanValue(value).value;
  }

  #ajvText(validate: ValidateFunction): string {
    return (validate.errors ?? []).map((e) => `${e.instancePath || "the arguments"} ${e.message ?? "is invalid"}`).join("; ");
  }

  output(output: JsonValue): ToolResult {
    const value = this.#scan(output);
    const schema = this.tool.definition.outputSchema;
    if (schema !== undefined) {
      const validate = this.validator(schema);
      if (!validate(value)) {
        return failed("tool_error", `${this.tool.definition.name} returned a result that breaks its output schema: ${this.#ajvText(validate)}.`);
      }
    }
    return { kind: "result", value };
  }

  #error(error: GuestError): ToolFailure {
    const name = this.tool.definition.name;
    const stack = error.stack === undefined ? "" : `\n${mapStack(error.stack, createPositionMapper(this.tool.sourceMap), FILENAME)}`;
    if (error.kind === "limit")
      return this.scanFailure(toolLimitFailure(name, error.limit, this.tool.limits) ?? { code: LIMIT_EXCEEDED, message: `${name}: ${error.message}` });
    // A failure the engine delivered (rethrown) keeps its meaning, as the engine recorded it (the
    // sandbox names its seq only for those: see the prelude's registry).
    const delivered = error.seq === undefined ? undefined : this.#delivered.get(error.seq);
    if (delivered !== undefined) return delivered;
    // The tool's own ToolError carries no engine meaning (a code like credentials.expired, retryable):
    // it is the tool's error, its text quoted, as a script's own is; what it threw stays as data (`details.thrown`).
    if (error.failure !== undefined) {
      const { code, message, details } = error.failure;
      return this.scanFailure({
        code: "tool_error",
        message: `${name} threw a ToolError of its own (code ${JSON.stringify(code)}), not the failure of a call it made: ${JSON.stringify(message)}${stack}`,
        details: { thrown: { code, ...(details === undefined ? {} : { details }) } },
      });
    }
    return this.scanFailure({ code: "tool_error", message: `${name} threw ${error.name}: ${error.message}${stack}` });
  }

  /** `failure` with secrets redacted. */
  scanFailure(failure: ToolFailure): ToolFailure {
    return this.#scan(failure as unknown as JsonValue) as unknown as ToolFailure;
  }

  timedOut(): ToolResult {
    if (this.call.signal.aborted) return failed("timeout", `${this.tool.definition.name} was stopped: the call was cancelled.`);
    return failed(
      "timeout",
      `${this.tool.definition.name} took longer than its deadline (limits.deadlineMs: ${this.tool.limits.deadlineMs} ms), host calls and the wait for a sandbox included, and was stopped.`,
    );
  }
}

/** The code of the ToolError a user tool threw of its own (its failure is `tool_error`, the code kept in `details.thrown`), if it did. */
export function thrownCode(failure: ToolFailure): string | undefined {
  const { details } = failure;
  if (failure.code !== "tool_error" || typeof details !== "object" || details === null || Array.isArray(details)) return undefined;
  const thrown = details.thrown;
  if (typeof thrown !== "object" || thrown === null || Array.isArray(thrown)) return undefined;
  return typeof thrown.code === "string" ? thrown.code : undefined;
}

/** A host call's answer and the commit of its record. */
interface Answer {
  readonly answer: SubCallAnswer;
  readonly durable: Promise<void>;
  /** What an invoked user tool logged while answering (after its name). */
  readonly logs: readonly LogLine[];
}

const DURABLE: Promise<void> = Promise.resolve();

/** A host call's outcome as the tool gets it: a value or a failure (`unanswered`: the host call got no answer, so it is not recorded). */
type Answered = (
  | { readonly kind: "result"; readonly value: JsonValue; readonly unanswered?: undefined }
  | { readonly kind: "failure"; readonly failure: ToolFailure; readonly unanswered?: true }
) & { readonly invokedLogs?: readonly LogLine[] };

/**
 * An outcome without an answer (interrupted, parked) is a failure for the tool: it runs within
 * one call and cannot wait for a worker or a renewed credential. Its parent call can be retried.
 */
function settled(outcome: ToolOutcome, what: string): Answered {
  if (outcome.kind === "result") return { kind: "result", value: outcome.value };
  if (outcome.kind === "failure") return { kind: "failure", failure: outcome.failure };
  const why = outcome.kind === "interrupted" ? outcome.reason : outcome.park.message;
  return { kind: "failure", failure: toolFailure("network_error", `${what} got no answer: ${why}`, { retryable: true }), unanswered: true };
}

function refusal(code: string, message: string): Answered & { readonly kind: "failure" } {
  return { kind: "failure", failure: toolFailure(code, message) };
}

function failed(code: string, message: string): ToolResult {
  return { kind: "failure", failure: toolFailure(code, message) };
}

function lostFailure(tool: UserTool, error: unknown): ToolFailure {
  const name = tool.definition.name;
  if (error instanceof SandboxStoppedError)
    return toolLimitFailure(name, error.error.limit, tool.limits) ?? toolFailure(LIMIT_EXCEEDED, `${name}: ${error.error.message}`);
  if (error instanceof SandboxLostError)
    return { code: "tool_error", message: `${name}'s sandbox was lost (${error.message}); the call may be made again.`, retryable: true };
  return {
    code: "tool_error",
    message: `${name} could not be run: ${error instanceof Error ? error.message : String(error)}. This is a bug in Tapedeck; please report it.`,
  };
}

/** `promise`'s value, or undefined once `signal` aborts first. */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}
