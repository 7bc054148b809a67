import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { compileRegex, type LinearRegex } from "../util/linear-regex.js";
import { formatPointer, parsePointer, readPointer } from "./json-pointer.js";

/**
 * The one language of tests on a call's arguments, shared by a toolset's approval rules
 * (`approval.ts`, `when`) and direct tools' approval policies (`direct/approval-policy.ts`,
 * `args`): the value at a JSON Pointer `equals` a JSON value, is `oneOf` several, is a string
 * that `matches` a regular expression, or is `present` (or not). The wire shape is
 * `@tapedeck/protocol`'s `ArgumentTest`.
 *
 * Invariants:
 * - `checkArgumentTest` never throws, whatever it is given: it reports every mistake with the
 *   path of the field (`….pointer`, `….matches`) and compiles what is valid. Unknown fields and
 *   two operators in one test are mistakes (a misspelt operator must not silently test nothing).
 * - Regular expressions run on a linear-time engine (`util/linear-regex.ts`): a pattern from a
 *   harness or toolset author meets text from a model, so no pattern can hold the process.
 * - `argumentTestHolds` never throws; a test it cannot answer (a text too long for a regular
 *   expression) says so as `broken`, and the rule that asked denies.
 */

export type { ArgumentTest } from "@tapedeck/protocol";

/** A test ready to run: the pointer parsed, JSON values canonical, the pattern compiled. */
export type CompiledTest =
  | { readonly kind: "equals"; readonly pointer: readonly string[]; readonly canonical: string }
  | { readonly kind: "oneOf"; readonly pointer: readonly string[]; readonly canonical: ReadonlySet<string> }
  | { readonly kind: "matches"; readonly pointer: readonly string[]; readonly regex: LinearRegex }
  | { readonly kind: "present"; readonly pointer: readonly string[]; readonly present: boolean };

/** Values of a `oneOf`: far above any hand-written rule, and a bound on the work per call. */
export const MAX_ONE_OF_VALUES = 1000;

export const TEST_KINDS = ["equals", "oneOf", "matches", "present"] as const;

/** Where a mistake is (`approval.ask[0].args[1].matches`, `rules[2].when[0].pointer`) and what. */
export type ReportMistake = (path: string, message: string) => void;

/** Checks `test` (named `where` in mistakes) and compiles it; `undefined` when it has a mistake, each reported. Never throws. */
export function checkArgumentTest(test: unknown, where: string, report: ReportMistake): CompiledTest | undefined {
  if (!isPlainObject(test)) {
    report(where, `must be a test like { pointer: "/tool_name", equals: "x" } (or oneOf, matches, present), not ${describeValue(test)}`);
    return undefined;
  }
  const kinds = TEST_KINDS.filter((kind) => Object.hasOwn(test, kind));
  for (const key of Object.keys(test)) {
    if (key !== "pointer" && key !== "flags" && !(TEST_KINDS as readonly string[]).includes(key)) {
      report(`${where}.${key}`, `is not a field of a test (fields: pointer, ${TEST_KINDS.join(", ")}, flags)`);
    }
  }
  if (kinds.length !== 1) {
    report(where, `must have exactly one of ${TEST_KINDS.join(", ")}${kinds.length > 1 ? `, not ${kinds.join(" and ")}` : ""}`);
    return undefined;
  }
  if (typeof test.pointer !== "string") {
    report(`${where}.pointer`, 'must be a JSON Pointer string like "/tool_name" ("" for the whole arguments)');
    return undefined;
  }
  const parsed = parsePointer(test.pointer);
  if (!parsed.ok) {
    report(`${where}.pointer`, parsed.problem);
    return undefined;
  }
  const pointer = parsed.tokens;
  if (test.flags !== undefined && kinds[0] !== "matches") report(`${where}.flags`, "only a `matches` test has flags");
  switch (kinds[0]!) {
    case "equals":
      return jsonProblem(test.equals) === undefined
        ? { kind: "equals", pointer, canonical: canonicalJson(test.equals as JsonValue) }
        : (report(`${where}.equals`, jsonProblem(test.equals)!), undefined);
    case "oneOf": {
      if (!Array.isArray(test.oneOf) || test.oneOf.length > MAX_ONE_OF_VALUES) {
        report(`${where}.oneOf`, `must be an array of at most ${MAX_ONE_OF_VALUES} JSON values`);
        return undefined;
      }
      const bad = (test.oneOf as unknown[]).findIndex((v) => jsonProblem(v) !== undefined);
      if (bad >= 0) {
        report(`${where}.oneOf[${bad}]`, jsonProblem((test.oneOf as unknown[])[bad])!);
        return undefined;
      }
      return { kind: "oneOf", pointer, canonical: new Set((test.oneOf as JsonValue[]).map((v) => canonicalJson(v))) };
    }
    case "matches": {
      if (typeof test.matches !== "string") {
        report(`${where}.matches`, "must be a regular expression as a string");
        return undefined;
      }
      if (test.flags !== undefined && typeof test.flags !== "string") {
        report(`${where}.flags`, 'must be a string of flags ("i", "m", "s")');
        return undefined;
      }
      const compiled = compileRegex(test.matches, test.flags ?? "");
      if (!compiled.ok) {
        report(`${where}.${compiled.field === "flags" ? "flags" : "matches"}`, compiled.problem);
        return undefined;
      }
      return { kind: "matches", pointer, regex: compiled.regex };
    }
    case "present":
      if (typeof test.present !== "boolean") {
        report(`${where}.present`, "must be true or false");
        return undefined;
      }
      return { kind: "present", pointer, present: test.present };
  }
}

/** Whether `test` holds for `args`; `broken` (with why) when it cannot be answered. Never throws. */
export function argumentTestHolds(test: CompiledTest, args: JsonValue): boolean | { readonly broken: string } {
  const found = readPointer(args, test.pointer);
  switch (test.kind) {
    case "present":
      return found.found === test.present;
    case "equals":
      return found.found && canonicalJson(found.value) === test.canonical;
    case "oneOf":
      return found.found && test.canonical.has(canonicalJson(found.value));
    case "matches": {
      if (!found.found || typeof found.value !== "string") return false;
      const matched = test.regex.test(found.value);
      return matched === "tooLong"
        ? { broken: `the value at ${formatPointer(test.pointer)} is too long to test with a regular expression (${found.value.length} characters)` }
        : matched;
    }
  }
}

/** What makes `value` not plain JSON (what an HTTP body or a toolset file could carry), or `undefined`. */
function jsonProblem(value: unknown): string | undefined {
  try {
    canonicalJson(value as JsonValue);
    return value === undefined ? "must be a JSON value" : undefined;
  } catch {
    return "must be a JSON value (no undefined, functions, cycles or non-finite numbers)";
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` in a few words, for a mistake's message: `"alow"`, `number 3`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return `${typeof value} ${value}`;
  return typeof value === "object" ? "an object" : typeof value;
}
