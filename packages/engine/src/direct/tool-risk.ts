import type { JsonObject } from "@tapedeck/protocol";
import { globMatchesTool, type ToolNames } from "./tool-glob.js";

/**
 * A tool's risk, the default that `unmatched: "byRisk"` decides on: the policy's override for the
 * tool if it has one, else the risk pinned with the tool, else what its MCP annotations hint
 * (`readOnlyHint` → low, `destructiveHint` → high, anything else or none → medium).
 *
 * Annotations are hints, never permissions (the MCP specification: an untrusted server's
 * annotations must not drive authorization): a low risk only lets `byRisk` skip the question,
 * and no annotation can turn a `deny` or `ask` rule off. An unannotated tool is medium, not high,
 * as seed 002 decides: treating every casual server's tools as destructive would ask for all of
 * them; write `unmatched: "ask"` for that strictness.
 */
export const Risk = {
  /** Reads only: `byRisk` lets it through. */
  low: "low",
  /** Unknown or ordinary writes: `byRisk` asks. */
  medium: "medium",
  /** Destructive: `byRisk` asks. */
  high: "high",
} as const;
export type Risk = (typeof Risk)[keyof typeof Risk];

export interface RiskOverride {
  /** Tools it applies to (a glob, see `tool-glob.ts`). */
  readonly tool: string;
  readonly risk: Risk;
}

export interface RiskedTool {
  readonly risk?: Risk;
  readonly annotations?: JsonObject;
}

export function riskFromAnnotations(annotations: JsonObject | undefined): Risk {
  if (annotations?.readOnlyHint === true) return "low";
  if (annotations?.destructiveHint === true) return "high";
  return "medium";
}

/** The risk of `tool`: the first override whose glob matches it, else its pinned risk, else its annotations'. */
export function toolRisk(tool: RiskedTool, names: ToolNames, overrides: readonly RiskOverride[] = []): Risk {
  const override = overrides.find((o) => globMatchesTool(o.tool, names));
  return override?.risk ?? tool.risk ?? riskFromAnnotations(tool.annotations);
}
