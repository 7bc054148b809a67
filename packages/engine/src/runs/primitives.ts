import { PrimitiveTool, toolFailure, type JsonValue, type ToolFailure } from "@tapedeck/protocol";
import { parseWorkflowCall, type WorkflowCall } from "../workflows/workflow-calls.js";

/**
 * The primitives: the calls a script makes to the engine itself rather than to a tool (`sleep`,
 * `signal`, `webhook`, and `workflows.<name>.start/result/signal`). They are journaled, replayed
 * and forked like tool calls, in the reserved group `tapedeck` (`PrimitiveTool`); the engine
 * answers them. This file reads their arguments.
 */

/** A primitive call's arguments, checked: the prelude builds them, but a journal is data. */
export type PrimitiveCall =
  | { readonly kind: "sleep"; readonly until: number }
  | { readonly kind: "signal"; readonly name: string; readonly timeoutMs?: number; readonly until?: number }
  | { readonly kind: "webhook"; readonly name: string }
  | WorkflowCall;

/** Whether `tool` names a primitive (the reserved group `tapedeck`). */
export function isPrimitive(tool: string): boolean {
  return tool.startsWith("tapedeck.");
}

/** The primitive call `tool(args)`, or the failure that rejects it. */
export function parsePrimitive(tool: string, args: JsonValue): PrimitiveCall | ToolFailure {
  const object = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  const number = (key: string): number | undefined => (typeof object[key] === "number" && Number.isFinite(object[key]) ? object[key] : undefined);
  const name = typeof object.name === "string" && object.name !== "" ? object.name : undefined;
  const invalid = (what: string) => toolFailure("invalid_arguments", `${tool}: ${what}.`);
  switch (tool) {
    case PrimitiveTool.sleep: {
      const until = number("until");
      return until === undefined ? invalid("until must be a time in ms") : { kind: "sleep", until };
    }
    case PrimitiveTool.signal: {
      if (name === undefined) return invalid("name must be a non-empty string");
      const until = number("until");
      const timeoutMs = number("timeoutMs");
      return { kind: "signal", name, ...(until === undefined ? {} : { until }), ...(timeoutMs === undefined ? {} : { timeoutMs }) };
    }
    case PrimitiveTool.webhook:
      return name === undefined ? invalid("name must be a non-empty string") : { kind: "webhook", name };
    case PrimitiveTool.workflowStart:
    case PrimitiveTool.workflowResult:
    case PrimitiveTool.workflowSignal:
      return parseWorkflowCall(tool, args);
    default:
      return toolFailure("unknown_tool", `There is no primitive ${tool}.`);
  }
}

/**
 * Whether each primitive acts outside the run: a webhook binding, a child run, a signal to it.
 * Those start once the batch that schedules them is durable, like a call sent to a tool; the
 * others only wait (a timer, a kept signal, a child's end) and start at once.
 */
export const ACTS_OUTSIDE_THE_RUN: { readonly [K in PrimitiveCall["kind"]]: boolean } = {
  sleep: false,
  signal: false,
  webhook: true,
  "workflow.start": true,
  "workflow.result": true,
  "workflow.signal": true,
};
