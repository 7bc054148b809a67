import { formatDuration, type JsonValue, type ToolFailure } from "@tapedeck/protocol";
import { TOOL_FIND } from "./own-tools.js";
import type { ModelContent } from "./model-content.js";

/**
 * Every way a direct tool call can fail, as the model reads it: an `isError` result (never a
 * thrown exception: the model APIs need a result for every tool call, a denied one included),
 * whose text says what happened, whether anything was sent, and what to do next.
 *
 * Invariant: one text per kind, chosen by a mapped type, so a new kind does not compile until it
 * has its text. Texts name tools by the name the model calls them.
 */

/** A problem with the arguments, as the validator reports it. */
export interface ArgumentProblem {
  /** JSON Pointer into the arguments (`/title`; `/` for the whole). */
  readonly path: string;
  /** Where in the schema (`#/properties/title/type`). */
  readonly schemaPath?: string;
  readonly message: string;
}

export type DirectFailure =
  /** The model named a tool the table does not have. `available`: the model names it has, for suggestions. */
  | { readonly kind: "unknown_tool"; readonly tool: string; readonly available?: readonly string[] }
  /** A Responses `function_call` whose `namespace` is not its tool's (`namespace`: the call's; `actual`: the tool's, absent for a top-level one). */
  | { readonly kind: "wrong_namespace"; readonly tool: string; readonly namespace: string; readonly actual?: string }
  /** A lazy tool called before `tool_find` loaded it; `finder`: the tool that loads it, when not `tool_find` (the Responses API's `tool_search`). */
  | { readonly kind: "not_loaded"; readonly tool: string; readonly finder?: string }
  /** The arguments break the tool's input schema; nothing was sent. */
  | { readonly kind: "invalid_arguments"; readonly tool: string; readonly problems: readonly ArgumentProblem[] }
  /** The approval policy denied the call; nothing was sent. */
  | { readonly kind: "denied"; readonly tool: string; readonly reason: string }
  /** A human rejected the call; nothing was sent. */
  | { readonly kind: "rejected"; readonly tool: string; readonly reason?: string }
  /** Nobody decided before the approval expired; nothing was sent. */
  | { readonly kind: "approval_expired"; readonly tool: string; readonly waitedMs: number }
  /** An attempt took longer than the tool's timeout: it was sent, its effect is unknown. */
  | { readonly kind: "timeout"; readonly tool: string; readonly afterMs?: number }
  /** A rate limit refused the call; nothing was sent. */
  | { readonly kind: "rate_limited"; readonly tool: string; readonly retryAfterMs?: number }
  /** The call waits for a human (an expired credential, a changed schema); it was not sent. */
  | { readonly kind: "parked"; readonly tool: string; readonly waitingFor: string }
  /** Interrupted, and its policy is `at_most_once`: it may or may not have happened. */
  | { readonly kind: "outcome_unknown"; readonly tool: string }
  /** The tool answered with an error (MCP `isError`): its own text. */
  | { readonly kind: "tool_error"; readonly tool: string; readonly text: string }
  /** The model's tool call id was already used for another call in this session. */
  | { readonly kind: "call_id_reused"; readonly tool: string; readonly toolCallId: string; readonly recordedTool: string }
  /** Any other failure the journal records (`refused`, `network_error`, `result_too_large`, …). */
  | { readonly kind: "failed"; readonly tool: string; readonly code: string; readonly message: string };

export type DirectFailureKind = DirectFailure["kind"];

type Texts = { readonly [K in DirectFailureKind]: (failure: Extract<DirectFailure, { kind: K }>) => string };

const TEXTS: Texts = {
  unknown_tool: (f) => {
    const near = nearest(f.tool, f.available ?? []);
    return `There is no tool named "${f.tool}", so nothing was called.${near.length > 0 ? ` Did you mean ${near.map((n) => `"${n}"`).join(" or ")}?` : ""} Call one of the tools you were given, by its exact name.`;
  },
  wrong_namespace: (f) =>
    `The tool "${f.tool}" is not in the namespace "${f.namespace}", so nothing was called. ` +
    (f.actual === undefined ? `It is a top-level function: call it without a namespace.` : `It is in the namespace "${f.actual}": call it there.`),
  not_loaded: (f) =>
    `The tool "${f.tool}" is not loaded yet, so nothing was sent. Call ${f.finder ?? TOOL_FIND}({ "names": ["${f.tool}"] }) first to load its definition, then call it.`,
  invalid_arguments: (f) =>
    `The arguments for "${f.tool}" do not match its input schema, so nothing was sent: ${f.problems
      .map((p) => `${p.path === "" || p.path === "/" ? "the arguments" : p.path} ${p.message}${p.schemaPath ? ` [schema ${p.schemaPath}]` : ""}`)
      .join("; ")}. Fix the arguments and call "${f.tool}" again.`,
  denied: (f) =>
    `The call to "${f.tool}" was denied by the approval policy (${f.reason}), so nothing was sent. Do not retry it: do without it, or ask the user.`,
  rejected: (f) =>
    `A human rejected the call to "${f.tool}"${f.reason ? `: ${f.reason}` : ""}. Nothing was sent. Do not call it again with the same arguments unless the user asks you to.`,
  approval_expired: (f) =>
    `The call to "${f.tool}" waited ${formatDuration(f.waitedMs)} for an approval that never came, and the approval expired. Nothing was sent. If it is still needed, call it again to ask again, or tell the user.`,
  timeout: (f) =>
    `The call to "${f.tool}" did not answer${f.afterMs !== undefined ? ` within ${formatDuration(f.afterMs)}` : " in time"}. It was sent, so it may have taken effect: check before calling it again.`,
  rate_limited: (f) =>
    `The call to "${f.tool}" was refused by a rate limit; nothing was sent. ${f.retryAfterMs !== undefined ? `Wait ${formatDuration(f.retryAfterMs)} before calling it again` : "Wait before calling it again"}, or do something else meanwhile.`,
  parked: (f) =>
    `The call to "${f.tool}" was not sent: it is waiting for ${f.waitingFor}, which a human must provide. Tell the user what is needed; call it again once they say it is done.`,
  outcome_unknown: (f) =>
    `The call to "${f.tool}" was interrupted, and this tool is never sent twice, so whether it took effect is unknown. Check its effect (read what it would have changed) before calling it again.`,
  tool_error: (f) => `"${f.tool}" reported an error:\n${f.text}`,
  call_id_reused: (f) =>
    `The tool call id "${f.toolCallId}" was already used in this session for a call of "${f.recordedTool}", so this call of "${f.tool}" was not sent. Use a new tool call id for each call.`,
  failed: (f) => `The call to "${f.tool}" failed (${f.code}): ${f.message}`,
};

export function failureText(failure: DirectFailure): string {
  return (TEXTS[failure.kind] as (f: DirectFailure) => string)(failure);
}

/** The `isError` content the model gets for `failure`. */
export function failureContent(failure: DirectFailure): ModelContent {
  return { parts: [{ type: "text", text: failureText(failure) }], isError: true };
}

/** A failure the journal recorded (a `ToolFailure`), as a direct failure of the tool the model calls `tool`. */
export function directFailureOf(tool: string, failure: ToolFailure): DirectFailure {
  switch (failure.code) {
    case "invalid_arguments":
      return { kind: "invalid_arguments", tool, problems: argumentProblems(failure.details, failure.message) };
    case "tool_error":
      return { kind: "tool_error", tool, text: failure.message };
    case "timeout":
      return { kind: "timeout", tool, ...numberDetail(failure.details, "timeoutMs", "afterMs") };
    case "rate_limited":
      return { kind: "rate_limited", tool, ...numberDetail(failure.details, "retryAfterMs", "retryAfterMs") };
    case "outcomeUnknown":
      return { kind: "outcome_unknown", tool };
    case "approval_rejected":
      return { kind: "rejected", tool, ...(failure.message ? { reason: failure.message } : {}) };
    case "unknown_tool":
      return { kind: "unknown_tool", tool };
    default:
      return { kind: "failed", tool, code: failure.code, message: failure.message };
  }
}

/** The validator's `details` (`[{ path, schemaPath, message }]`, `runs/args-validator.ts`), or its message when it has none. */
function argumentProblems(details: JsonValue | undefined, message: string): ArgumentProblem[] {
  if (Array.isArray(details)) {
    const problems = details.flatMap((d) =>
      typeof d === "object" && d !== null && !Array.isArray(d) && typeof d.path === "string" && typeof d.message === "string"
        ? [{ path: d.path, message: d.message, ...(typeof d.schemaPath === "string" ? { schemaPath: d.schemaPath } : {}) }]
        : [],
    );
    if (problems.length > 0) return problems;
  }
  return [{ path: "/", message }];
}

function numberDetail<K extends string>(details: JsonValue | undefined, from: string, to: K): { [P in K]?: number } {
  if (typeof details !== "object" || details === null || Array.isArray(details)) return {};
  const value = details[from];
  return typeof value === "number" && Number.isFinite(value) ? ({ [to]: value } as { [P in K]?: number }) : {};
}

/** Up to 3 names within a small edit distance of `name`, closest first: the model's typos. */
function nearest(name: string, names: readonly string[]): string[] {
  const limit = Math.max(2, Math.floor(name.length / 4));
  return names
    .map((candidate) => ({ candidate, distance: editDistance(name.toLowerCase(), candidate.toLowerCase(), limit) }))
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, 3)
    .map((c) => c.candidate);
}

/** Levenshtein distance, or `limit + 1` as soon as it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]!);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}
