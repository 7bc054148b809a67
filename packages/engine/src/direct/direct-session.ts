import type { DecisionWait, JournalEvent, JsonValue, RunWait } from "@tapedeck/protocol";
import type { ModelApi, SessionApproval, SessionDecision, SessionTools, ToolCallAnswer, ToolCallRequest } from "@tapedeck/protocol/api";
import type { Clock } from "../clock.js";
import { EngineError } from "../errors.js";
import { judgedArgs } from "../library/judged-args.js";
import { CallIntake, type IntakeDeps, type IssuedCall } from "../runs/call-intake.js";
import { outcomeEvent, type CallOutcome } from "../runs/call-outcome.js";
import { readHistory } from "../runs/history.js";
import { RunJournal } from "../runs/run-journal.js";
import type { WorkflowHost } from "../runs/workflow-host.js";
import type { ToolSource } from "../sources/tool-source.js";
import type { RunRecord, Store } from "../store/store.js";
import type { CatalogedToolset } from "../toolset/toolset-catalog.js";
import { canonicalJson } from "../util/canonical-json.js";
import { sha256Hex } from "../util/ids.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import { anthropicToolFindResult, anthropicTools } from "./anthropic-lowering.js";
import { decideApproval } from "./approval-decision.js";
import { checkPendingApproval, signPendingApproval, type PendingApproval } from "./approval-signature.js";
import { noteForBinding } from "./binding-diff.js";
import type { BlobStore } from "../store/blob-store.js";
import { withBusinessError } from "./business-errors.js";
import type { BoundTable, BoundTool } from "./direct-binding.js";
import { directCallId, directIdempotencyKey } from "./direct-call-key.js";
import { directFailureOf, failureContent, type DirectFailure } from "./failure-text.js";
import { blobPageBytes, fetchBlob } from "./fetch-blob.js";
import { chatTools, menuDefinitions } from "./menu-lowering.js";
import { contentOfValue, type ModelContent } from "./model-content.js";
import { namespaceMismatch, responsesTools, toolSearchArguments, toolSearchOutput } from "./openai-lowering.js";
import { FETCH_BLOB, TOOL_FIND } from "./own-tools.js";
import { anthropicToolResult, chatToolMessage, genericToolResult, responsesFunctionCallOutput } from "./result-blocks.js";
import {
  approvalView,
  isPending,
  readSession,
  sessionNameOf,
  type RecordedAnswer,
  type SessionLedger,
  type SessionSeq,
  type SessionTable,
} from "./session-journal.js";
import { boundTableOf } from "./session-table.js";
import { SealedCallArgs } from "./sealed-call-args.js";
import { withinBudget } from "./spill.js";
import { findTools, loadedTools, toolFindText, unloadedCall } from "./tool-find.js";

/**
 * One direct tool session, live in this engine: its journal (a run's, in the store), its call
 * intake (the engine's, as for a script's calls, without a sandbox), and what its journal says
 * (`SessionLedger`). Model tool calls come in one at a time, from any number of concurrent
 * requests; each is identified by its call id (the model's tool call id hashed with the labels).
 *
 * Invariants:
 * - A toolset call is journaled before it is sent (`direct.call` and the intake's `call.*`
 *   entries in one batch, sent only once that batch is durable), with the key `<session id>/<seq>`.
 * - One call id is one call: handling it again (concurrently, or after a restart) answers what
 *   the journal records for it, never sends it again. A call id used for another tool is refused.
 * - Every tool call gets a result for the model, failures included (`isError`); only faults of
 *   the engine and misuse (`config_mismatch`, an unknown binding) are thrown.
 * - A call waiting for a human holds nothing else: concurrent calls go on; its approval is
 *   signed with its binding, expires at `expiresAt` (the clock's, virtual in tests), and a
 *   decision is journaled before the call is sent.
 * - The model's content of a call is a function of its journaled outcome and its binding: the
 *   same after a restart, spilled to the same blob.
 * - A call of a tool with `sensitiveParams` keeps its live arguments sealed (`sealed-call-args.ts`)
 *   from its journaling until its outcome: a session read again (restart, eviction, another
 *   process) sends an approved call with its real values, never with the journal's hashes.
 */

/** How long a call waits for a human by default before the model is told its approval expired. */
export const APPROVAL_EXPIRY_MS = 24 * 60 * 60 * 1000;

export interface SessionDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly source: ToolSource;
  readonly toolset: (id: string) => Promise<CatalogedToolset>;
  readonly limits: { readonly runConcurrency: number; readonly maxAttempts: number; readonly maxValueBytes: number; readonly maxJournalEntries: number };
  readonly recordEvents: boolean;
  readonly workflowSchemas: SchemaValidator;
  /** Signs pending approvals (HMAC-SHA-256): asked for when a first approval is signed or checked. */
  readonly signingKey: () => Uint8Array;
  readonly blobs: BlobStore;
  /** What the live arguments of calls with `sensitiveParams` are sealed with in `blobs` until their outcome (`sealed-call-args.ts`). */
  readonly callArgsKey: () => Buffer;
  readonly approvalExpiryMs: number;
  /** A fault of the engine (the store): the session is dropped from memory and read again from its journal next time. */
  readonly fault: (sessionId: string, error: unknown) => void;
  /** A call's request for a decision is durable: the engine's listeners hear of it as of a run's (the server logs it; webhooks go out). */
  readonly onDecisionNeeded: (sessionId: string, wait: DecisionWait) => void;
}

interface Binding {
  readonly id: string;
  readonly table: BoundTable;
  readonly toolset: CatalogedToolset;
}

export class DirectSession {
  readonly #deps: SessionDeps;
  readonly #ledger: SessionLedger;
  readonly #journal: RunJournal;
  /** One intake per toolset the session's bindings use (a session may be bound to another toolset later). */
  readonly #intakes = new Map<string, CallIntake>();
  readonly #bindings = new Map<string, Promise<Binding>>();
  /** Who waits for a call's outcome or decision, by seq. */
  readonly #waiters = new Map<number, Set<() => void>>();
  readonly #expiries = new Map<number, () => void>();
  /** The open calls whose arguments are kept sealed (`sealed-call-args.ts`): deleted at their outcome. */
  readonly #sealed = new Set<number>();
  readonly #sealedArgs: SealedCallArgs;
  #nextSeq: number;
  #closed = false;
  /** Requests inside the session now (`enter` … `leave`): a session with any is never evicted. */
  #active = 0;
  #lastUsed: number;

  private constructor(
    readonly record: RunRecord,
    deps: SessionDeps,
    ledger: SessionLedger,
  ) {
    this.#deps = deps;
    this.#ledger = ledger;
    this.#sealedArgs = new SealedCallArgs(deps.callArgsKey, deps.blobs);
    this.#nextSeq = ledger.lastSeq + 1;
    this.#lastUsed = deps.clock.now();
    this.#journal = new RunJournal(record.id, deps.store, {
      maxEntries: deps.limits.maxJournalEntries,
      recordEvents: deps.recordEvents,
      shownWaits: () => [...this.#intakes.values()].flatMap((intake) => intake.shownWaits()).sort((a: RunWait, b: RunWait) => a.seq - b.seq),
      onFull: (error) => deps.fault(record.id, new Error(error.message)),
      onDurable: () => {},
    });
    this.#journal.open(record.journalLength, record.hostFaults !== undefined);
  }

  /** The session of `record`, read from its journal; its open calls go on (sent again per their policy, or waiting again). */
  static async open(record: RunRecord, deps: SessionDeps): Promise<DirectSession> {
    const entries = await deps.store.readJournal(record.id, 0, Number.MAX_SAFE_INTEGER);
    const session = new DirectSession(record, deps, readSession(entries));
    await session.#resume(entries);
    return session;
  }

  /** The session's name, as the harness gave it. */
  get name(): string {
    return sessionNameOf(this.record);
  }

  /** Records `table` as the session's binding unless it is the latest already; answers the note for the model. */
  async bind(table: SessionTable, bound: BoundTable): Promise<string | undefined> {
    const previous = this.#ledger.latest;
    if (previous === bound.id) return undefined;
    const previousBinding = previous === undefined ? undefined : (await this.#binding(previous)).table.binding;
    await this.#append([{ kind: "direct.bound", binding: bound.id, table: table as unknown as JsonValue }]);
    return noteForBinding(previousBinding, bound.binding);
  }

  /** The tools of the next request under `bindingId`, per model API, given the tools loaded so far. */
  async tools(bindingId: string): Promise<SessionTools> {
    const { table } = await this.#binding(bindingId);
    const loaded = loadedTools(this.#ledger.found, table);
    return {
      anthropic: anthropicTools(table, loaded) as unknown as SessionTools["anthropic"],
      responses: responsesTools(table, loaded) as unknown as SessionTools["responses"],
      chat: chatTools(table, loaded) as unknown as SessionTools["chat"],
      generic: menuDefinitions(table, loaded),
    };
  }

  /** Handles one model tool call (see the invariants). */
  async call(request: ToolCallRequest, stop?: AbortSignal): Promise<ToolCallAnswer> {
    this.#open();
    const binding = await this.#binding(request.binding);
    const callId = directCallId(this.record.id, this.record.labels ?? {}, request.toolCallId);
    const known = this.#ledger.calls.get(callId);
    if (known !== undefined) {
      if (known.name !== request.name) {
        const failure: DirectFailure = { kind: "call_id_reused", tool: request.name, toolCallId: request.toolCallId, recordedTool: known.name };
        return this.#done(request, binding, { content: failureContent(failure) });
      }
      if (known.answer !== undefined) return this.#done(request, await this.#binding(known.binding), known.answer);
      return this.#await(known.seq!, request, binding, stop);
    }
    const name = request.name;
    if (name === FETCH_BLOB && binding.table.own.has(FETCH_BLOB)) {
      // A read of what the session stored: answered live, the same every time, not journaled.
      return this.#done(request, binding, { content: await fetchBlob(request.input, this.record.id, this.#deps.blobs, pageBytesOf(binding.table)) });
    }
    const isToolSearch = request.api === "responses" && name === "tool_search" && binding.table.binding.lazy?.lowering === "openai";
    if ((name === TOOL_FIND && binding.table.own.has(TOOL_FIND)) || isToolSearch) {
      const input = isToolSearch
        ? toolSearchArguments({ type: "tool_search_call", call_id: request.toolCallId, arguments: request.input })
        : parsedInput(request);
      const found = input.ok ? findTools(input.input, binding.table, binding.toolset.pinned) : { ok: false as const, failure: input.failure };
      const answer: RecordedAnswer = found.ok
        ? { content: { parts: [{ type: "text", text: toolFindText(found.record, binding.table) }], isError: false }, found: found.record }
        : { content: failureContent(found.failure) };
      return this.#answerWithout(callId, request, binding, answer);
    }
    const tool = binding.table.tools.get(name);
    if (tool === undefined) {
      const available = [...binding.table.tools.keys(), ...binding.table.own.keys()];
      return this.#answerWithout(callId, request, binding, { content: failureContent({ kind: "unknown_tool", tool: name, available }) });
    }
    const elsewhere = request.api === "responses" ? namespaceMismatch(binding.table, name, request.namespace) : undefined;
    if (elsewhere !== undefined) return this.#answerWithout(callId, request, binding, { content: failureContent(elsewhere) });
    const notLoaded = unloadedCall(name, binding.table, loadedTools(this.#ledger.found, binding.table));
    if (notLoaded !== undefined) {
      // Under the openai lowering a Responses model loads tools with its own `tool_search`.
      const finder = request.api === "responses" && binding.table.binding.lazy?.lowering === "openai" ? { finder: "tool_search" } : {};
      return this.#answerWithout(callId, request, binding, { content: failureContent({ ...notLoaded, ...finder }) });
    }
    const input = parsedInput(request);
    if (!input.ok) return this.#answerWithout(callId, request, binding, { content: failureContent(input.failure) });
    const args = (input.input ?? {}) as JsonValue;
    // The policy judges the arguments as the tool will act on them (a files tool's paths normalised).
    const judged = judgedArgs(tool.tool, args);
    const verdict = decideApproval(
      binding.table.approval,
      // The summary quotes the arguments as the journal has them (sensitive values hashed).
      {
        names: tool.names,
        args: judged,
        shownArgs: binding.toolset.sensitive?.redact(tool.tool, judged) ?? judged,
        tool: tool.tool,
        toolsetRequiresApproval: tool.tool.policy.approval === true,
      },
      { sticky: this.#ledger.always },
    );
    if (verdict.verdict === "deny") {
      return this.#answerWithout(callId, request, binding, { content: failureContent({ kind: "denied", tool: name, reason: verdict.reason }) });
    }
    const seq = this.#nextSeq++;
    const asks = verdict.verdict === "ask";
    const intake = this.#intake(binding.toolset);
    const scheduled = intake.schedule([{ seq, tool: tool.names.path, args, ...(asks ? { asks: true } : {}) } satisfies IssuedCall]);
    const now = this.#deps.clock.now();
    const events: JournalEvent[] = [{ kind: "direct.call", callId, toolCallId: request.toolCallId, name, binding: binding.id, call: seq }, ...scheduled.events];
    const scheduledArgs = scheduled.events.find((e) => e.kind === "call.scheduled")?.args;
    if (asks && scheduledArgs !== undefined) {
      const expiresAt = now + this.#deps.approvalExpiryMs;
      const pending = this.#pendingOf(seq, tool.names.path, scheduledArgs, binding.id);
      events.push({
        kind: "direct.asked",
        seq,
        summary: verdict.summary,
        reason: verdict.reason,
        ...(verdict.ruleId === undefined ? {} : { ruleId: verdict.ruleId }),
        signature: signPendingApproval(this.#deps.signingKey(), pending),
        expiresAt,
      });
    }
    // The live values of a sensitive call are kept sealed alongside its journaling (not before: the
    // ledger must see the call at once); it is sent, or answered pending, only once both are durable.
    const kept = scheduledArgs !== undefined && tool.tool.policy.sensitiveParams !== undefined ? this.#keepSealed(seq, args) : Promise.resolve();
    const written = Promise.all([this.#append(events, this.#journal.withEvents(undefined, now, scheduled.runEvents), now), kept]);
    written.then(scheduled.onDurable, (error: unknown) => this.#fault(error));
    scheduled.begin();
    await written;
    return this.#await(seq, request, binding, stop);
  }

  /** The calls waiting for a human, oldest first. */
  approvals(): SessionApproval[] {
    const pending: SessionApproval[] = [];
    for (const seq of this.#ledger.seqs.values()) if (isPending(seq)) pending.push(this.#approvalOf(seq));
    return pending.sort((a, b) => a.seq - b.seq);
  }

  /** Approves or rejects a call waiting for a human (see `DirectSessions.decide`). */
  async decide(
    seq: number,
    decision: "approved" | "rejected",
    options: { readonly reason?: string; readonly always?: boolean; readonly binding?: string; readonly allowConfigDrift?: boolean },
  ): Promise<SessionDecision> {
    this.#open();
    const call = this.#ledger.seqs.get(seq);
    if (call === undefined || !isPending(call)) {
      const state = call === undefined ? "has no such call" : call.expired ? "expired" : call.decided ? `was ${call.decided} already` : "waits for no decision";
      throw new EngineError("conflict", `Call #${seq} of session ${JSON.stringify(this.name)} ${state}: there is nothing to decide.`);
    }
    if (this.#deps.clock.now() >= call.asked!.expiresAt) {
      await this.#expire(seq);
      throw new EngineError("conflict", `The approval of call #${seq} of session ${JSON.stringify(this.name)} expired; the model is told so.`);
    }
    const note = await this.#checkBinding(call, options.binding ?? call.binding, options.allowConfigDrift === true);
    const id = directIdempotencyKey(this.record.id, seq);
    if (decision === "approved" && options.always === true) await this.#append([{ kind: "direct.always", seq, tool: call.tool }]);
    const intake = this.#intake((await this.#binding(call.binding)).toolset);
    this.#ledger.apply({
      kind: "call.decided",
      seq,
      decision,
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      at: this.#deps.clock.now(),
    });
    this.#cancelExpiry(seq);
    await intake.decide(seq, decision, options.reason);
    this.#notify(seq);
    return { id, decision, ...(note === undefined ? {} : { note }) };
  }

  /**
   * Why this process cannot send call `seq` (its tool's source is not here: a host tool in a CLI
   * without `--host`), or undefined when it can. Such a call, approved, stays open and unsent for
   * the process that next holds the session (`CallIntake`'s invariants).
   */
  async lackingSource(seq: number): Promise<string | undefined> {
    const call = this.#ledger.seqs.get(seq);
    if (call === undefined) return undefined;
    const tool = (await this.#binding(call.binding)).toolset.byPath.get(call.tool);
    return tool === undefined ? undefined : this.#deps.source.check?.([tool]);
  }

  /** A request enters the session: until it leaves, the session is in use (never evicted). */
  enter(): void {
    this.#active++;
  }

  /** The request that entered leaves: the session was last used now. */
  leave(): void {
    this.#active--;
    this.#lastUsed = this.#deps.clock.now();
  }

  /** When a request last ended in the session (the engine's clock). */
  /** The toolsets its bindings bound, each once (the ledger keeps every binding read or made). */
  get boundToolsets(): readonly string[] {
    return [...new Set([...this.#ledger.tables.values()].map((table) => table.toolset))];
  }

  get lastUsed(): number {
    return this.#lastUsed;
  }

  /**
   * Whether dropping the session from memory loses nothing: no request is inside it, and every
   * toolset call without an outcome waits for a human (its approval is in the journal, and its
   * expiry is armed again when the session is read again). A call in flight, or decided and not
   * yet answered, keeps the session: its outcome is journaled only by the live session.
   */
  get evictable(): boolean {
    if (this.#closed || this.#active > 0) return false;
    for (const seq of this.#ledger.unsettled) {
      const call = this.#ledger.seqs.get(seq);
      if (call === undefined || !isPending(call)) return false;
    }
    return true;
  }

  /** Stops taking outcomes and timers: the session is read again from its journal when next used. */
  close(): void {
    this.#closed = true;
    for (const intake of this.#intakes.values()) intake.close();
    this.#journal.close();
    for (const cancel of this.#expiries.values()) cancel();
    this.#expiries.clear();
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake();
  }

  get closed(): boolean {
    return this.#closed;
  }

  // ---- calls ----

  /** A call answered without being sent: journaled (`direct.call` with its answer), then given to the model. */
  async #answerWithout(callId: string, request: ToolCallRequest, binding: Binding, answer: RecordedAnswer): Promise<ToolCallAnswer> {
    await this.#append([
      { kind: "direct.call", callId, toolCallId: request.toolCallId, name: request.name, binding: binding.id, answer: answer as unknown as JsonValue },
    ]);
    return this.#done(request, binding, answer, answer.found !== undefined);
  }

  /** Waits for call `seq`'s outcome (a call waiting for a human: at most `request.wait` seconds), then answers it. */
  async #await(seq: number, request: ToolCallRequest, current: Binding, stop: AbortSignal | undefined): Promise<ToolCallAnswer> {
    const deadline = Date.now() + (request.wait ?? 0) * 1000;
    for (;;) {
      const call = this.#ledger.seqs.get(seq);
      if (call === undefined) throw new Error(`session ${this.record.id}: call #${seq} has a direct.call entry and no call.* entry`);
      if (isPending(call)) {
        await this.#checkBinding(call, current.id, request.allowConfigDrift === true);
        if (this.#deps.clock.now() >= call.asked!.expiresAt) {
          await this.#expire(seq);
          continue;
        }
      }
      if (call.outcome !== undefined) return this.#done(request, await this.#binding(call.binding), await this.#contentOf(call));
      if (this.#closed) throw new EngineError("closed", "The engine is closing; handle the tool call again once it is back: nothing is lost.");
      if (stop?.aborted) throw new EngineError("closed", "The request was stopped while the call was in flight; handle the tool call again to get its result.");
      const pending = isPending(call);
      const left = deadline - Date.now();
      if (pending && left <= 0) return { status: "pending", approval: this.#approvalOf(call) };
      await this.#wakeOf(seq, pending ? left : undefined, stop);
    }
  }

  /** Resolves when call `seq` changes, after `ms` (if given), or when `stop` aborts. */
  #wakeOf(seq: number, ms: number | undefined, stop: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const set = this.#waiters.get(seq) ?? new Set<() => void>();
      this.#waiters.set(seq, set);
      const timer = ms === undefined ? undefined : setTimeout(wake, ms);
      function wake(): void {
        set.delete(wake);
        if (timer !== undefined) clearTimeout(timer);
        stop?.removeEventListener("abort", wake);
        resolve();
      }
      set.add(wake);
      stop?.addEventListener("abort", wake, { once: true });
    });
  }

  #notify(seq: number): void {
    const set = this.#waiters.get(seq);
    if (set === undefined) return;
    this.#waiters.delete(seq);
    for (const wake of set) wake();
  }

  /** The model's content of a settled toolset call: its outcome as text and images, business errors marked, within its budget. */
  async #contentOf(call: SessionSeq): Promise<RecordedAnswer> {
    const { table } = await this.#binding(call.binding);
    const tool = table.tools.get(call.name);
    const outcome = call.outcome!;
    let content: ModelContent;
    if (outcome.ok) content = withBusinessError(contentOfValue(outcome.value), table.binding.errorEnvelope);
    else if (call.expired && call.asked !== undefined)
      content = failureContent({ kind: "approval_expired", tool: call.name, waitedMs: call.asked.expiresAt - call.asked.askedAt });
    else if (call.decided === "rejected" && outcome.error.code === "approval_rejected")
      content = failureContent({ kind: "rejected", tool: call.name, ...(call.reason === undefined ? {} : { reason: call.reason }) });
    else content = failureContent(directFailureOf(call.name, outcome.error));
    return { content: await this.#withinBudget(content, tool, call.name) };
  }

  #withinBudget(content: ModelContent, tool: BoundTool | undefined, name: string): Promise<ModelContent> {
    if (tool === undefined) return Promise.resolve(content);
    return withinBudget(content, tool.budget, { session: this.record.id, tool: name, blobs: this.#deps.blobs });
  }

  /** The answer for the request's model API. */
  async #done(request: ToolCallRequest, binding: Binding, answer: RecordedAnswer, toolsChanged = false): Promise<ToolCallAnswer> {
    const seq = this.#ledger.calls.get(directCallId(this.record.id, this.record.labels ?? {}, request.toolCallId))?.seq;
    const result = shapeFor(request.api, request, answer, binding.table);
    return {
      status: "done",
      ...(seq === undefined ? {} : { seq }),
      result,
      isError: answer.content.isError,
      ...(toolsChanged ? { tools: await this.tools(request.binding) } : {}),
    };
  }

  // ---- approvals ----

  #pendingOf(seq: number, tool: string, args: JsonValue, binding: string): PendingApproval {
    return { session: this.record.id, seq, tool, argsDigest: sha256Hex(canonicalJson(args)), binding };
  }

  /** Checks that a pending call may be decided or answered under `bindingId`; the note on drift allowed. Throws `config_mismatch` otherwise. */
  async #checkBinding(call: SessionSeq, bindingId: string, allowConfigDrift: boolean): Promise<string | undefined> {
    const asked = call.asked!;
    const recorded = await this.#binding(call.binding);
    const current = bindingId === call.binding ? recorded : await this.#binding(bindingId);
    const check = checkPendingApproval({
      key: this.#deps.signingKey(),
      pending: this.#pendingOf(call.seq, call.tool, call.args, call.binding),
      signature: asked.signature,
      current: current.table.binding,
      recorded: recorded.table.binding,
      allowConfigDrift,
    });
    if (!check.ok) throw new EngineError(check.code === "config_mismatch" ? "config_mismatch" : "conflict", check.message);
    return check.drift ? check.note : undefined;
  }

  #approvalOf(call: SessionSeq): SessionApproval {
    return approvalView(this.record, call);
  }

  /** Nobody decided in time: `direct.expired`, then the intake rejects the call; the model is told its approval expired. */
  async #expire(seq: number): Promise<void> {
    const call = this.#ledger.seqs.get(seq);
    if (call === undefined || !isPending(call) || this.#closed) return;
    this.#cancelExpiry(seq);
    await this.#append([{ kind: "direct.expired", seq }]);
    const intake = this.#intake((await this.#binding(call.binding)).toolset);
    this.#ledger.apply({ kind: "call.decided", seq, decision: "rejected", at: this.#deps.clock.now() });
    await intake.decide(seq, "rejected", "the approval expired");
    this.#notify(seq);
  }

  #armExpiry(seq: number, at: number): void {
    if (this.#expiries.has(seq) || this.#closed) return;
    this.#expiries.set(
      seq,
      this.#deps.clock.setTimer(at, () => {
        this.#expiries.delete(seq);
        this.#expire(seq).catch((error: unknown) => this.#fault(error));
      }),
    );
  }

  #cancelExpiry(seq: number): void {
    this.#expiries.get(seq)?.();
    this.#expiries.delete(seq);
  }

  // ---- the journal and the intakes ----

  /** Appends `events` in one commit and applies them to the ledger at once (so a concurrent handling of the same call sees it). */
  #append(events: readonly JournalEvent[], patch?: Parameters<RunJournal["append"]>[2], at: number = this.#deps.clock.now()): Promise<void> {
    for (const event of events) this.#ledger.apply({ ...event, at });
    return this.#journal.append(events, at, patch);
  }

  #intake(toolset: CatalogedToolset): CallIntake {
    let intake = this.#intakes.get(toolset.id);
    if (intake !== undefined) return intake;
    const deps: IntakeDeps = {
      store: this.#deps.store,
      source: this.#deps.source,
      clock: this.#deps.clock,
      limits: this.#deps.limits,
      workflows: noWorkflows(this.#deps.workflowSchemas),
      createWebhook: () => Promise.reject(new Error("a direct tool session makes no webhook calls")),
    };
    intake = new CallIntake(this.record, toolset, deps, this.#journal, this.#host(), this.#deps.workflowSchemas);
    this.#intakes.set(toolset.id, intake);
    return intake;
  }

  #host() {
    return {
      outcome: (seq: number, outcome: CallOutcome) => this.#outcome(seq, outcome),
      decisionNeeded: (wait: DecisionWait) => {
        const asked = this.#ledger.seqs.get(wait.seq)?.asked;
        if (asked !== undefined) this.#armExpiry(wait.seq, asked.expiresAt);
        this.#deps.onDecisionNeeded(this.record.id, wait);
      },
      changed: () => {},
      fault: (error: unknown) => this.#fault(error),
    };
  }

  /** A call has its outcome: journaled, then whoever waits for it is told (and its sealed arguments deleted). */
  #outcome(seq: number, outcome: CallOutcome): void {
    if (this.#closed) return;
    const event = outcomeEvent(seq, outcome);
    this.#journal.append([event], this.#deps.clock.now()).then(
      () => {
        this.#ledger.apply({ ...event, at: this.#deps.clock.now() });
        this.#notify(seq);
        if (this.#sealed.delete(seq)) this.#sealedArgs.drop(this.record.id, seq).catch((error: unknown) => this.#fault(error));
      },
      (error: unknown) => this.#fault(error),
    );
  }

  async #resume(entries: Parameters<typeof readHistory>[1]): Promise<void> {
    const history = readHistory(this.record.id, entries);
    const open = [...history.calls.values()].filter((call) => !call.hasOutcome && !call.rejected);
    for (const call of open) {
      const seq = this.#ledger.seqs.get(call.seq);
      if (seq === undefined) continue;
      const { toolset } = await this.#binding(seq.binding);
      const intake = this.#intake(toolset);
      const recorded = seq.asked !== undefined ? { ...call, asks: true } : call;
      const { live, unopened } = await this.#openSealed(toolset, call.seq, call.tool, call.args);
      intake.remember([recorded]);
      intake.resume([recorded], live, unopened);
      if (isPending(seq)) this.#armExpiry(call.seq, seq.asked!.expiresAt);
    }
  }

  /** Seals the live arguments of call `seq` (its tool has `sensitiveParams`). */
  #keepSealed(seq: number, args: JsonValue): Promise<void> {
    this.#sealed.add(seq);
    return this.#sealedArgs.keep(this.record.id, seq, args);
  }

  /** The live arguments of open call `seq` from its sealed copy, for the intake's `resume`; or why they do not open. */
  async #openSealed(
    toolset: CatalogedToolset,
    seq: number,
    path: string,
    recorded: JsonValue,
  ): Promise<{ live?: ReadonlyMap<number, JsonValue>; unopened?: ReadonlyMap<number, string> }> {
    const tool = toolset.byPath.get(path);
    if (tool?.policy.sensitiveParams === undefined) return {};
    const redact = (args: JsonValue) => toolset.sensitive?.redact(tool, args) ?? args;
    const opened = await this.#sealedArgs.open(this.record.id, seq, recorded, redact);
    if (opened.kind === "none") return {};
    this.#sealed.add(seq);
    return opened.kind === "opened" ? { live: new Map([[seq, opened.args]]) } : { unopened: new Map([[seq, opened.why]]) };
  }

  #binding(id: string): Promise<Binding> {
    let binding = this.#bindings.get(id);
    if (binding === undefined) {
      const table = this.#ledger.tables.get(id);
      if (table === undefined) {
        return Promise.reject(
          new EngineError(
            "invalid_request",
            `Session ${JSON.stringify(this.name)} has no binding ${id}: bind the tools again (directTools) and use the binding it answers.`,
          ),
        );
      }
      binding = this.#deps.toolset(table.toolset).then((toolset) => ({ id, table: boundTableOf(table, toolset.pinned), toolset }));
      this.#bindings.set(id, binding);
      binding.catch(() => this.#bindings.delete(id));
    }
    return binding;
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", "The engine is closing; handle the tool call again once it is back: nothing is lost.");
  }

  #fault(error: unknown): void {
    if (this.#closed) return;
    this.close();
    this.#deps.fault(this.record.id, error);
  }
}

/** The arguments of a call: an object, or (OpenAI) its JSON text. */
function parsedInput(request: ToolCallRequest): { ok: true; input: unknown } | { ok: false; failure: DirectFailure } {
  if (typeof request.input !== "string" || request.api === "anthropic") return { ok: true, input: request.input };
  try {
    return { ok: true, input: request.input.trim() === "" ? {} : (JSON.parse(request.input) as unknown) };
  } catch {
    return { ok: false, failure: { kind: "invalid_arguments", tool: request.name, problems: [{ path: "/", message: "are not JSON" }] } };
  }
}

/** The answer in the shape `api` takes back. */
function shapeFor(api: ModelApi, request: ToolCallRequest, answer: RecordedAnswer, table: BoundTable): JsonValue {
  const { content, found } = answer;
  switch (api) {
    case "anthropic":
      return (found !== undefined
        ? anthropicToolFindResult(request.toolCallId, found, table)
        : anthropicToolResult(request.toolCallId, content)) as unknown as JsonValue;
    case "responses":
      if (found !== undefined && request.name === "tool_search") {
        return toolSearchOutput({ type: "tool_search_call", call_id: request.toolCallId, arguments: request.input }, found, table) as unknown as JsonValue;
      }
      return responsesFunctionCallOutput(request.toolCallId, content) as unknown as JsonValue;
    case "chat":
      return chatToolMessage(request.toolCallId, content) as unknown as JsonValue;
    case "generic":
      return genericToolResult(content) as unknown as JsonValue;
  }
}

/** Sessions make no workflow calls (their calls are toolset tools only): the intake's workflow host refuses them. */
function noWorkflows(schemas: SchemaValidator): WorkflowHost {
  const refuse = () => Promise.reject(new Error("a direct tool session makes no workflow calls"));
  return { schemas, start: refuse, result: refuse, signal: refuse, executing: () => false };
}

/** `fetch_blob`'s page size in a table: within the smallest budget a result of it was spilled under, so a page fits every one. */
function pageBytesOf(table: BoundTable): number {
  const budgets = [...table.tools.values()].filter((tool) => tool.budget.overflow === "spill").map((tool) => tool.budget.maxTokens);
  return blobPageBytes(Math.min(...budgets));
}
