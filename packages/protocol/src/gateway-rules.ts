import type { ApprovalRule } from "./api/sessions.js";

/**
 * Approval rules for a gateway-style server (seed 002): one dispatching tool (`tool_execute`)
 * runs hundreds of operations named in its arguments (`{ tool_name, params }`), so rules written
 * against tool names see every operation as the same tool. These rules decide on the operation:
 * writes ask (the approver reads the real operation), reads are allowed; any other operation is
 * left to `unmatched` (by default it asks: the dispatcher declares no annotations).
 *
 * The result is data (regular expressions as strings), to spread into a policy:
 * `{ ...gatewayRules(options), unmatched: "byRisk" }`, or its `ask` and `allow` next to others.
 */

export interface GatewayRuleOptions {
  /** The dispatching tool (a glob on its path, name or model name), e.g. `tool_execute`. */
  readonly tool: string;
  /** Where the operation's name is in the arguments, a JSON Pointer, e.g. `/tool_name`. */
  readonly operation: string;
  /** Operations that write: a regular expression (a string or a `RegExp`), e.g. `_(create|update|delete|upload)$`. */
  readonly writes: string | RegExp;
  /** Operations that only read, e.g. `_(get|list|search)$`. */
  readonly reads: string | RegExp;
  /** The approver's line for a write. Default: `<tool> {<operation>}`. */
  readonly summary?: string;
  /** Prefix of the rules' ids. Default `gateway`: `gateway.writes`, `gateway.reads`. */
  readonly id?: string;
}

export interface GatewayRules {
  readonly ask: readonly ApprovalRule[];
  readonly allow: readonly ApprovalRule[];
}

export function gatewayRules(options: GatewayRuleOptions): GatewayRules {
  const id = options.id ?? "gateway";
  const test = (regex: string | RegExp) =>
    typeof regex === "string"
      ? { pointer: options.operation, matches: regex }
      : { pointer: options.operation, matches: regex.source, ...(regex.flags !== "" ? { flags: regex.flags } : {}) };
  return {
    ask: [
      {
        id: `${id}.writes`,
        tool: options.tool,
        args: [test(options.writes)],
        summary: options.summary ?? `${options.tool.replaceAll("{", "{{").replaceAll("}", "}}")} {${options.operation}}`,
        reason: `a write through ${options.tool}: a human approves each one`,
      },
    ],
    allow: [{ id: `${id}.reads`, tool: options.tool, args: [test(options.reads)], reason: `a read through ${options.tool}` }],
  };
}
