import type { Diagnostic } from "@tapedeck/protocol";
import ts from "typescript";
import { codeFrame } from "./code-frame.js";

/**
 * What the checker reports, and how TypeScript's diagnostics become it. Messages are written
 * for the model that wrote the script: TypeScript's advice about tsconfig and `@types`
 * packages is replaced, because the model can change neither.
 */

/** One problem in a script (the wire type, shared with the API and the SDK). */
export type { Diagnostic };

export type CheckResult =
  /** No errors: the script may run. `diagnostics` holds warnings only. */
  | { readonly ok: true; readonly diagnostics: readonly Diagnostic[] }
  /** At least one error: the script must not run. */
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Code of a diagnostic in the declarations or the sandbox globals: a Tapedeck bug, not the script's. */
export const INTERNAL_CODE = "internal";

export function checkResult(diagnostics: readonly Diagnostic[]): CheckResult {
  const ok = diagnostics.every((d) => d.category !== "error");
  return ok ? { ok, diagnostics } : { ok, diagnostics };
}

/** A diagnostic at offsets `start` of the script `file`. */
export function scriptDiagnostic(file: ts.SourceFile, start: number, code: number | string, category: Diagnostic["category"], message: string): Diagnostic {
  const { line, character } = file.getLineAndCharacterOfPosition(start);
  return { line: line + 1, column: character + 1, code, category, message, frame: codeFrame(file.text, line + 1, character + 1) };
}

/** A TypeScript diagnostic located in the script. */
export function fromTsDiagnostic(file: ts.SourceFile, d: ts.Diagnostic): Diagnostic {
  const category = d.category === ts.DiagnosticCategory.Error ? "error" : "warning";
  return scriptDiagnostic(file, d.start ?? 0, d.code, category, messageFor(file, d));
}

/**
 * A TypeScript diagnostic outside the script: in the generated declarations, the globals or
 * the options. Always an error, since the script's types cannot be trusted after it.
 */
export function internalDiagnostic(d: ts.Diagnostic, fileLabel: string): Diagnostic {
  const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  let where = "";
  let frame = "";
  if (d.file !== undefined && d.start !== undefined) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    where = ` at ${fileLabel}:${line + 1}:${character + 1}`;
    frame = codeFrame(d.file.text, line + 1, character + 1);
  }
  return {
    line: 0,
    column: 0,
    code: INTERNAL_CODE,
    category: "error",
    message: `Internal error${where}, not in your script (TS${d.code}): ${text} This is a Tapedeck bug; the script cannot be checked until it is fixed.`,
    frame,
  };
}

/** "Cannot find name 'X'. Do you need to install type definitions for node?…" and its kin. */
const MISSING_NAME_WITH_ADVICE = new Set([2580, 2581, 2582, 2583, 2584, 2591, 2592, 2593]);
const CANNOT_FIND_NAME = 2304;
const NOT_DETERMINISTIC = new Set(["WeakRef", "FinalizationRegistry"]);
/** Globals that only some toolsets have: the message says which toolsets, and what to do. */
const TOOLSET_GLOBALS: ReadonlyMap<string, string> = new Map([
  [
    "workflows",
    "this toolset pins no workflows. Save one first (save_workflow, or POST /v1/toolsets/<id>/workflows), then run the script on the toolset that saving it gives (a new id).",
  ],
  [
    "fetch",
    'this toolset does not enable the built-in `http` tool, so scripts have no network. Use the toolset\'s tools, or a toolset registered with "http": { "allow": [hosts] }.',
  ],
]);

function messageFor(file: ts.SourceFile, d: ts.Diagnostic): string {
  const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  if (d.start === undefined || d.length === undefined) return text;
  if (d.code !== CANNOT_FIND_NAME && !MISSING_NAME_WITH_ADVICE.has(d.code)) return text;
  const name = file.text.slice(d.start, d.start + d.length);
  if (NOT_DETERMINISTIC.has(name)) {
    return `Cannot find name '${name}': WeakRef and FinalizationRegistry are not available in scripts, because garbage-collection timing is not deterministic and a run must replay exactly.`;
  }
  const feature = TOOLSET_GLOBALS.get(name);
  if (feature !== undefined) return `Cannot find name '${name}': ${feature}`;
  if (MISSING_NAME_WITH_ADVICE.has(d.code)) {
    return `Cannot find name '${name}': scripts run in a sandbox with the ES2023 built-ins and \`console\`, without Node.js, browser or test-runner globals.`;
  }
  return text;
}
