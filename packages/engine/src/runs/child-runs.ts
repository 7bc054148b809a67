import { terminalStatuses, toolFailure, type JsonValue, type PinnedWorkflow } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import type { CompiledScript } from "../script/compile.js";
import type { RunRecord } from "../store/store.js";
import { SchemaValidator } from "../util/schema-validator.js";
import { MAX_WORKFLOW_DEPTH, WorkflowFailureCode, workflowFailed, workflowOutputMismatch } from "../workflows/workflow-calls.js";
import type { CallOutcome } from "./call-outcome.js";
import { createRun } from "./create-run.js";
import type { RunHost } from "./run-host.js";
import type { WorkflowHost } from "./workflow-host.js";

/**
 * The engine's side of workflow calls: child runs created (`createRun`), executed (by the
 * `RunHost`, the scheduler), read and signalled for the runs that start them.
 *
 * Invariants:
 * - One child per start call, ever: the child is created with the idempotency key
 *   `tapedeck:workflow:<caller>/<seq>` in the caller's namespace, so a start resumed after a
 *   crash (or raced by another engine) finds the child instead of creating a second one.
 * - A child is the caller's alone: it has the caller's toolset, namespace, labels and expiry,
 *   records its caller (`RunRecord.caller`), and only its caller may signal it or wait for it.
 * - A signal is sent with the call's key (`<caller>/<seq>`): sent again after a crash, it is
 *   kept once.
 */

export class ChildRuns implements WorkflowHost {
  readonly schemas = new SchemaValidator();
  /** Each workflow's JavaScript, by toolset and name: a pinned workflow never changes. */
  readonly #compiled = new Map<string, Promise<CompiledScript>>();

  constructor(private readonly host: RunHost) {}

  async start(caller: RunRecord, seq: number, name: string, input: JsonValue): Promise<CallOutcome> {
    const key = childKey(caller.id, seq);
    const found = await this.host.store.getRunByIdempotencyKey(key, caller.namespace);
    if (found) return this.#found(found, caller, key);
    const toolset = await this.host.toolset(caller.toolsetId);
    const workflow = Object.hasOwn(toolset.workflows, name) ? toolset.workflows[name] : undefined;
    if (!workflow) return failure("unknown_tool", `The toolset pins no workflow ${name}.`);
    const depth = await this.#depth(caller);
    if (depth >= MAX_WORKFLOW_DEPTH) {
      return failure(
        WorkflowFailureCode.tooDeep,
        `workflows.${name}.start: this run is a workflow ${depth} levels deep; workflows may nest ${MAX_WORKFLOW_DEPTH} deep at most. A workflow that starts itself needs a condition that stops it.`,
      );
    }
    const compiled = await this.#compile(toolset.id, name, workflow);
    const created = await createRun(this.host.store, this.host.clock, {
      toolsetId: caller.toolsetId,
      source: workflow.source,
      compiled,
      input,
      ...(caller.labels ? { labels: caller.labels } : {}),
      ...(caller.namespace ? { namespace: caller.namespace } : {}),
      caller: { runId: caller.id, seq },
      idempotencyKey: key,
      ...(caller.expiresAt === undefined ? {} : { expires: { at: caller.expiresAt } }),
    });
    if (created.kind === "duplicate") {
      // Another engine resumed the same call and won the race: its child is the one.
      const winner = await this.host.store.getRun(created.runId);
      return winner ? this.#found(winner, caller, key) : failure("invalid_arguments", `The child run ${created.runId} vanished.`);
    }
    this.host.execute(created.run, toolset);
    return { ok: true, value: { id: created.run.id } };
  }

  async result(callerId: string, name: string, workflow: PinnedWorkflow, childId: string): Promise<CallOutcome | undefined> {
    const child = await this.host.store.getRun(childId);
    if (!child || child.caller?.runId !== callerId) return notOurs(name, childId);
    const end = await this.host.recordedEnd(child);
    if (!end) {
      // Its caller waits for it: a child a crash left `running` goes on here rather than never.
      if (child.status === "running") await this.host.resumeStopped(child);
      return undefined;
    }
    if (end.status !== "completed") return { ok: false, error: workflowFailed(name, childId, end) };
    const problems = this.schemas.problems(workflow.output, end.output);
    return problems ? { ok: false, error: workflowOutputMismatch(name, childId, problems) } : { ok: true, value: end.output };
  }

  async signal(callerId: string, seq: number, childId: string, signal: string, payload: JsonValue): Promise<CallOutcome> {
    const child = await this.host.store.getRun(childId);
    if (!child || child.caller?.runId !== callerId) return notOurs("signal", childId);
    const key = `${callerId}/${seq}`;
    // A call resumed after a crash may have sent its signal before: the child may even have taken it and ended since.
    const endedBefore = async (status: string): Promise<CallOutcome> =>
      (await this.host.store.signalByKey(childId, key)) !== undefined ? { ok: true, value: null } : ended(signal, childId, status);
    if (terminalStatuses.includes(child.status)) return endedBefore(child.status);
    try {
      await this.host.signal(childId, signal, payload, { key });
    } catch (error) {
      if (!EngineError.is(error)) throw error;
      if (error.code === "conflict") return endedBefore("ended");
      if (error.code === "invalid_request") return failure("invalid_arguments", error.message);
      throw error;
    }
    return { ok: true, value: null };
  }

  executing(childId: string): boolean {
    return this.host.executing(childId);
  }

  /** The child a start call created before (a crash, a race): its id, if it is the caller's. */
  async #found(child: RunRecord, caller: RunRecord, key: string): Promise<CallOutcome> {
    if (child.caller?.runId !== caller.id)
      return failure(
        "invalid_arguments",
        `The idempotency key ${key} names run ${child.id}, which this run did not start; keys beginning with "tapedeck:" are reserved.`,
      );
    if (child.status === "running") await this.host.resumeStopped(child);
    return { ok: true, value: { id: child.id } };
  }

  /** How many workflows deep `run` is: 0 for a run nobody started, 1 for its child… */
  async #depth(run: RunRecord): Promise<number> {
    let depth = 0;
    for (let caller = run.caller; caller && depth < MAX_WORKFLOW_DEPTH; depth++) {
      caller = (await this.host.store.getRun(caller.runId))?.caller;
    }
    return depth;
  }

  #compile(toolsetId: string, name: string, workflow: PinnedWorkflow): Promise<CompiledScript> {
    const key = `${toolsetId}\n${name}`;
    let compiled = this.#compiled.get(key);
    if (!compiled) {
      compiled = this.host.compile(workflow.source);
      // A failure is not kept: the next start tries again.
      compiled.catch(() => this.#compiled.delete(key));
      this.#compiled.set(key, compiled);
    }
    return compiled;
  }
}

/** The idempotency key of the child run of call `seq` of `callerId`. */
export function childKey(callerId: string, seq: number): string {
  return `tapedeck:workflow:${callerId}/${seq}`;
}

function failure(code: string, message: string): CallOutcome {
  return { ok: false, error: toolFailure(code, message) };
}

function notOurs(what: string, childId: string): CallOutcome {
  return failure("invalid_arguments", `Run ${childId} is not a workflow this run started (${what}); use the id start() gave.`);
}

function ended(signal: string, childId: string, status: string): CallOutcome {
  return failure(
    WorkflowFailureCode.ended,
    `The workflow run ${childId} has ended (${status}); the signal "${signal}" was not sent. Await its result() instead.`,
  );
}
