import { toolFailure, type JsonValue, type PinnedTool, type PinnedWorkflow, type ToolFailure } from "@tapedeck/protocol";
import type { Park } from "../sources/tool-source.js";
import { canonicalValue } from "../util/canonical-json.js";
import type { ArgsRedaction } from "../toolset/redacted-args.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import { valueProblem } from "../util/value-bounds.js";
import { checkWorkflowCall } from "../workflows/workflow-calls.js";
import { callApproval } from "./call-approval.js";
import { outcomeUnknown, tooManyAttempts } from "./dispatcher.js";
import { ENGINE_STOPPED, type RecordedCall } from "./history.js";
import { MAX_ENGINE_STOP_ATTEMPTS } from "../limits.js";
import { isPrimitive, parsePrimitive, type PrimitiveCall } from "./primitives.js";
import type { Reused } from "./reuse-pool.js";
import { approvalRejected } from "./waits.js";

/**
 * What happens to one call, decided before anything is done about it (Code Mode's `decide()`):
 * a pure function of the call and what the journal and the toolset say, returning data. The
 * intake journals the decision (`call.scheduled`, `call.rejected`, `call.attempt`…) and acts on
 * it only once that is durable.
 *
 * Invariants:
 * - Pure: no clock, no store, no source; the same call in the same context is decided the same
 *   way, live and on resume.
 * - A new call is checked within the value bounds before it is canonicalised or measured, then
 *   against its tool's schema (or, for a primitive, its own rules and the toolset's workflows).
 * - A recorded call (the journal has it, the run is resumed) is decided from its journal state
 *   only: it was checked when it was issued.
 */

export type CallDecision =
  /** Refused before it is scheduled (arguments out of bounds or off the schema, no such tool or workflow): journaled `call.rejected`; the script gets `failure` at once. */
  | { readonly kind: "reject"; readonly args: JsonValue; readonly failure: ToolFailure }
  /** A fork's call its parent answered: journaled `call.scheduled` and `call.completed` (`reusedFrom`) together, never sent. */
  | { readonly kind: "reuse"; readonly args: JsonValue; readonly reused: Reused }
  /** A primitive (sleep, signal, webhook, workflows): scheduled, then answered by the engine itself. */
  | { readonly kind: "primitive"; readonly args: JsonValue; readonly call: PrimitiveCall }
  /** A tool call whose policy asks for approval: scheduled, not sent; it waits for a decision, journaled before the call is sent. */
  | { readonly kind: "await_approval"; readonly args: JsonValue; readonly tool: PinnedTool; readonly reason?: string }
  /**
   * A call over its tool's rate limit (`onLimit: "wait"`, `call.throttled` in the journal): it
   * waits until `until`, then tries to take a place in its window again; once it has one, `then`.
   */
  | { readonly kind: "throttle"; readonly args: JsonValue; readonly tool: PinnedTool; readonly until: number; readonly then: GatedDecision }
  /** A call held back by the engine (`call.parked` in the journal: its tool changed, its credential expired): it waits for the harness again. */
  | { readonly kind: "park"; readonly args: JsonValue; readonly tool: PinnedTool; readonly park: Park }
  /**
   * Sent to its tool's source from attempt `attempt`: 1 for a new call or an approved one; n + 1
   * for one the engine's stop interrupted after n attempts, once `call.attempt` (`interrupted`,
   * the reason) is durable. `schemaChangeApproved`: approved after a `tool.schema_changed` park, it goes as it is.
   */
  | {
      readonly kind: "send";
      readonly args: JsonValue;
      readonly tool: PinnedTool;
      readonly attempt: number;
      readonly interrupted?: string;
      /** Attempts so far (this one included) made because the engine stopped: not counted against `maxAttempts`. */
      readonly stops?: number;
      readonly schemaChangeApproved?: boolean;
    }
  /**
   * Sent before the engine stopped: the same attempt goes on if its source still holds it (a
   * host task queued or held by a worker, `ToolSource.resumes`); else `otherwise` (the tool's
   * interruption policy: `fail` or a `send` of the next attempt).
   */
  | {
      readonly kind: "resume";
      readonly args: JsonValue;
      readonly tool: PinnedTool;
      readonly attempt: number;
      /** Attempts so far made because the engine stopped: not counted against `maxAttempts`. */
      readonly stops: number;
      readonly otherwise: CallDecision;
      readonly schemaChangeApproved?: boolean;
    }
  /** Its outcome is known without sending it (a rejected decision; an interruption its policy does not retry): the script gets `failure`, journaled `call.failed`. */
  | { readonly kind: "fail"; readonly args: JsonValue; readonly failure: ToolFailure };

/** What a call of a rate-limited tool does once it has its place in the window: wait for approval, or go to its tool. */
export type GatedDecision = Extract<CallDecision, { readonly kind: "send" | "await_approval" }>;

/** A call to decide: one just issued (by a script, or, later, a model), or one its journal recorded. */
export interface CallToDecide {
  readonly seq: number;
  /** `group.name`, or a primitive's `tapedeck.*`. */
  readonly tool: string;
  readonly args: JsonValue;
  /** The issuer's own policy asks a human for it (a direct tool session's): it waits for approval as if its tool's policy required it. */
  readonly asks?: boolean;
  /** What the journal says of it, when it is resumed; absent for a call just issued. */
  readonly recorded?: RecordedCall;
}

/** What a decision depends on besides the call: the run's toolset and limits, and for a fork what its parent answered. */
export interface DecisionContext {
  readonly tools: ReadonlyMap<string, PinnedTool>;
  readonly workflows: Readonly<Record<string, PinnedWorkflow>>;
  /** Checks arguments against tools' input schemas. */
  readonly validator: SchemaValidator;
  /** Checks a workflow call's input and payload against the workflow's schemas. */
  readonly workflowSchemas: SchemaValidator;
  readonly maxValueBytes: number;
  readonly maxAttempts: number;
  /** A fork's parent's unused result for this tool and arguments (redacted, as its journal has them), if it has one (looked at, not taken). */
  readonly reusable?: (tool: string, args: JsonValue) => Reused | undefined;
  /** Redacts tools' `sensitiveParams`: a parent's journal holds its calls' arguments redacted. */
  readonly sensitive?: ArgsRedaction;
}

/** Why a resumed call's attempt is made again. */

export function decideCall(call: CallToDecide, context: DecisionContext): CallDecision {
  return call.recorded ? decideRecorded(call.recorded, context) : decideIssued(call, context);
}

function decideIssued(call: CallToDecide, context: DecisionContext): CallDecision {
  // The sandbox refuses such arguments already; a sandbox that did not must not fault the engine.
  const problem = valueProblem(call.args, { refuseLoneSurrogates: true });
  if (problem !== undefined) return reject(null, "invalid_arguments", `The arguments of ${call.tool} are refused: ${problem}.`);
  const args = canonicalValue(call.args);
  if (isPrimitive(call.tool)) {
    const parsed = parsePrimitive(call.tool, args);
    if ("message" in parsed) return { kind: "reject", args, failure: parsed };
    // A workflow call is checked against the toolset's workflows like a tool call against its schema.
    const workflow = parsed.kind === "workflow.start" || parsed.kind === "workflow.result" || parsed.kind === "workflow.signal" ? parsed : undefined;
    const failure = workflow && checkWorkflowCall(workflow, context.workflows, context.workflowSchemas);
    return failure ? { kind: "reject", args, failure } : reuseOr(call.tool, args, context, { kind: "primitive", args, call: parsed });
  }
  const tool = context.tools.get(call.tool);
  if (!tool) return reject(args, "unknown_tool", `The toolset has no tool ${call.tool}.`);
  const bytes = Buffer.byteLength(JSON.stringify(args));
  if (bytes > context.maxValueBytes) {
    return reject(
      null,
      "invalid_arguments",
      `The arguments of ${call.tool} are ${bytes} bytes; one recorded value may be at most ${context.maxValueBytes} bytes.`,
    );
  }
  const failure = context.validator.validateArgs(tool, args) ?? context.sensitive?.markerRefusal(tool, call.tool, args);
  if (failure) return { kind: "reject", args, failure };
  const approval = callApproval(tool, call.tool, args, call.asks === true);
  if (approval.kind === "deny") return { kind: "reject", args, failure: approval.failure };
  const decision = approval.kind === "ask" ? awaitApproval(args, tool, approval.reason) : ({ kind: "send", args, tool, attempt: 1 } as const);
  return reuseOr(call.tool, args, context, decision, context.sensitive?.redact(tool, args));
}

/** A fork's call is answered from its parent's journal when it can be (compared as journaled: `recorded`, its arguments redacted); else `decision`. */
function reuseOr(tool: string, args: JsonValue, context: DecisionContext, decision: CallDecision, recorded: JsonValue = args): CallDecision {
  const reused = context.reusable?.(tool, recorded);
  return reused ? { kind: "reuse", args, reused } : decision;
}

function decideRecorded(call: RecordedCall, context: DecisionContext): CallDecision {
  const { args } = call;
  if (isPrimitive(call.tool)) {
    const parsed = parsePrimitive(call.tool, args);
    return "message" in parsed ? { kind: "fail", args, failure: parsed } : { kind: "primitive", args, call: parsed };
  }
  const tool = context.tools.get(call.tool);
  if (!tool) throw new Error(`call #${call.seq} names ${call.tool}, which the run's toolset does not have`);
  if (call.parked) return { kind: "park", args, tool, park: call.parked };
  if (call.throttledUntil !== undefined) {
    // Never sent and never decided on (a throttled call is neither): once admitted it goes on as if just issued.
    const approval = callApproval(tool, call.tool, args, call.asks === true);
    const then: GatedDecision =
      approval.kind === "ask" ? { kind: "await_approval", args, tool, ...reasonOf(approval.reason) } : { kind: "send", args, tool, attempt: 1 };
    return { kind: "throttle", args, tool, until: call.throttledUntil, then };
  }
  if (call.decision?.decision === "rejected") return { kind: "fail", args, failure: approvalRejected(call.tool, call.decision.reason) };
  if (!call.decision) {
    const approval = callApproval(tool, call.tool, args, call.asks === true);
    if (approval.kind === "ask") return awaitApproval(args, tool, approval.reason);
  }
  // Sent before the engine stopped (or approved and about to be): its source may still hold
  // the attempt; if not, its policy decides.
  const approved = call.schemaChangeApproved ? { schemaChangeApproved: true } : {};
  return { kind: "resume", args, tool, attempt: call.attempts, stops: call.stops, otherwise: interrupted(call, tool), ...approved };
}

/** What the interruption policy makes of a call the engine's stop interrupted. */
function interrupted(call: RecordedCall, tool: PinnedTool): CallDecision {
  const { args } = call;
  if (tool.policy.onInterruption === "at_most_once") return { kind: "fail", args, failure: outcomeUnknown(ENGINE_STOPPED) };
  // The engine's own stops are not the call's: bounded apart (a call whose answer kills the engine).
  if (call.stops >= MAX_ENGINE_STOP_ATTEMPTS) return { kind: "fail", args, failure: tooManyAttempts(call.attempts, ENGINE_STOPPED) };
  return {
    kind: "send",
    args,
    tool,
    attempt: call.attempts + 1,
    interrupted: ENGINE_STOPPED,
    stops: call.stops + 1,
    ...(call.schemaChangeApproved ? { schemaChangeApproved: true } : {}),
  };
}

function awaitApproval(args: JsonValue, tool: PinnedTool, reason: string | undefined): CallDecision {
  return { kind: "await_approval", args, tool, ...reasonOf(reason) };
}

function reasonOf(reason: string | undefined): { readonly reason?: string } {
  return reason === undefined ? {} : { reason };
}

function reject(args: JsonValue, code: ToolFailure["code"], message: string): CallDecision {
  return { kind: "reject", args, failure: toolFailure(code, message) };
}
