import { toolFailure, type JsonObject, type ToolFailure } from "@tapedeck/protocol";

/**
 * The rules by which the `http` tool refuses a request. Each refusal is a `ToolError` of code
 * `refused` whose message says which rule, which host or address, and what to do; `details.rule`
 * carries the rule for code that branches on it.
 */
export const RefusalRule = {
  /** The URL does not parse, or its host is empty. */
  invalidUrl: "invalid-url",
  /** The URL holds characters parsers read differently (backslash, tab, newline, space, control). */
  ambiguousUrl: "ambiguous-url",
  /** Not http or https. */
  scheme: "scheme",
  /** The URL carries a user name or password. */
  credentials: "credentials",
  /** The host is not in the toolset's allow-list. */
  hostNotAllowed: "host-not-allowed",
  /** The host is, or resolves to, an address in a refused range. */
  address: "address",
  /** More redirects than allowed. */
  tooManyRedirects: "too-many-redirects",
  /** A redirect without a usable Location. */
  badRedirect: "bad-redirect",
  /** Outside what the caller may reach (`ToolCallRequest.targetCheck`: a user tool's grant). */
  outsideGrant: "outside-grant",
} as const;
export type RefusalRule = (typeof RefusalRule)[keyof typeof RefusalRule];

export function refusal(rule: RefusalRule, message: string, details: JsonObject = {}): ToolFailure {
  return toolFailure("refused", `The http tool refused the request: ${message}`, { details: { rule, ...details } });
}
