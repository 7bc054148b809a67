import {
  PrimitiveTool,
  FailureCode,
  toolFailure,
  type JsonObject,
  type JsonValue,
  type PinnedWorkflow,
  type RunError,
  type ToolFailure,
} from "@tapedeck/protocol";
import type { SchemaValidator } from "../util/schema-validator.js";

/**
 * The primitive calls behind the `workflows` global, as the journal records them:
 *
 * - `tapedeck.workflow.start  { name, input }`          → `{ id }` (the child run)
 * - `tapedeck.workflow.result { name, id }`             → the child's output, or `workflow_failed`
 * - `tapedeck.workflow.signal { name, id, signal, payload }` → null
 *
 * This file parses them (a journal is data: the prelude builds them, but nothing else checks
 * them), checks them against the workflows the run's toolset pins, and words their failures.
 */

/** Failure codes of workflow calls, beyond `invalid_arguments` and `unknown_tool`. */
export const WorkflowFailureCode = {
  /** The child run failed or was cancelled (`details`: its run id, status and error), or its output broke its schema. */
  failed: FailureCode.workflow_failed,
  /** A signal went to a child that has ended: nothing was sent. */
  ended: FailureCode.workflow_ended,
  /** Starting it would nest workflows deeper than `MAX_WORKFLOW_DEPTH`. */
  tooDeep: FailureCode.workflow_too_deep,
} as const;

/** How deep workflows may nest (a run, its child, the child's child…): deeper is almost always a workflow that starts itself without end. */
export const MAX_WORKFLOW_DEPTH = 8;

export type WorkflowCall =
  | { readonly kind: "workflow.start"; readonly name: string; readonly input: JsonValue }
  | { readonly kind: "workflow.result"; readonly name: string; readonly id: string }
  | { readonly kind: "workflow.signal"; readonly name: string; readonly id: string; readonly signal: string; readonly payload: JsonValue };

export function isWorkflowCall(tool: string): boolean {
  return tool === PrimitiveTool.workflowStart || tool === PrimitiveTool.workflowResult || tool === PrimitiveTool.workflowSignal;
}

/** The workflow call `tool(args)`, or the failure that rejects it. */
export function parseWorkflowCall(tool: string, args: JsonValue): WorkflowCall | ToolFailure {
  const object = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  const text = (key: string): string | undefined => (typeof object[key] === "string" && object[key] !== "" ? object[key] : undefined);
  const invalid = (what: string) => toolFailure("invalid_arguments", `${tool}: ${what}.`);
  const name = text("name");
  if (name === undefined) return invalid("name must be the workflow's name");
  if (tool === PrimitiveTool.workflowStart) return { kind: "workflow.start", name, input: object.input ?? null };
  const id = text("id");
  if (id === undefined) return invalid("id must be the id of a run start() gave");
  if (tool === PrimitiveTool.workflowResult) return { kind: "workflow.result", name, id };
  const signal = text("signal");
  if (signal === undefined) return invalid("signal must be a non-empty string");
  return { kind: "workflow.signal", name, id, signal, payload: object.payload ?? null };
}

/**
 * Checks a workflow call against the workflows the run's toolset pins, before it is scheduled:
 * the workflow exists, `start`'s input and a signal's payload match their schemas. The failure
 * rejects the call (`call.rejected`), like invalid arguments of a tool.
 */
export function checkWorkflowCall(call: WorkflowCall, workflows: Readonly<Record<string, PinnedWorkflow>>, schemas: SchemaValidator): ToolFailure | undefined {
  const workflow = Object.hasOwn(workflows, call.name) ? workflows[call.name] : undefined;
  if (!workflow) {
    const known = Object.keys(workflows);
    return toolFailure("unknown_tool", `The toolset pins no workflow ${call.name}${known.length === 0 ? "" : ` (it pins ${known.join(", ")})`}.`);
  }
  const mismatch = (what: string, problems: readonly string[]) =>
    toolFailure(
      "invalid_arguments",
      `workflows.${call.name}.${what} does not match its schema: ${problems.join("; ")}. Fix it to match the workflow's declaration.`,
    );
  if (call.kind === "workflow.start") {
    const problems = schemas.problems(workflow.input, call.input);
    return problems ? mismatch("start: the input", problems) : undefined;
  }
  if (call.kind === "workflow.signal") {
    const schema = workflow.signals?.[call.signal];
    if (schema === undefined || !Object.hasOwn(workflow.signals ?? {}, call.signal)) {
      const declared = Object.keys(workflow.signals ?? {});
      return toolFailure(
        "invalid_arguments",
        `workflows.${call.name} takes no signal "${call.signal}"${declared.length === 0 ? "; it declares no signals" : `; it declares ${declared.map((s) => JSON.stringify(s)).join(", ")}`}.`,
      );
    }
    const problems = schemas.problems(schema, call.payload);
    return problems ? mismatch(`signal: the payload of "${call.signal}"`, problems) : undefined;
  }
  return undefined;
}

/** The failure `result()` rejects with when the child run did not complete. */
export function workflowFailed(
  name: string,
  runId: string,
  end: { readonly status: "failed"; readonly error: RunError } | { readonly status: "cancelled"; readonly reason: string },
): ToolFailure {
  if (end.status === "cancelled") {
    return toolFailure(WorkflowFailureCode.failed, `The workflow ${name} (run ${runId}) was cancelled: ${end.reason}`, {
      details: { runId, status: end.status, reason: end.reason },
    });
  }
  const { kind, message, failure } = end.error;
  const error: JsonObject = { kind, message, ...(failure ? { code: failure.code } : {}) };
  return toolFailure(WorkflowFailureCode.failed, `The workflow ${name} (run ${runId}) failed: ${message}`, { details: { runId, status: end.status, error } });
}

/** The failure `result()` rejects with when the child completed with an output its schema refuses. */
export function workflowOutputMismatch(name: string, runId: string, problems: readonly string[]): ToolFailure {
  return toolFailure(
    WorkflowFailureCode.failed,
    `The workflow ${name} (run ${runId}) completed, but its output does not match its output schema: ${problems.join("; ")}. Fix the workflow (save it again) so its output matches.`,
    { details: { runId, status: "completed" } },
  );
}
