/**
 * The type checker's diagnostics as the model reads them: numbered, each with its line, code and
 * message, then its code frame; errors first. Bounded in count and in length.
 */
import type { Diagnostic } from "@tapedeck/protocol";
import { bound, boundList } from "./text-limits.js";

/** At most this many diagnostics are shown: the first ones matter most (later ones often follow from them). */
export const DIAGNOSTICS_SHOWN = 20;
/** One diagnostic (message and frame) is cut past this many characters. */
export const DIAGNOSTIC_CHARS = 2_000;

/** `1. line 3, column 7: error TS2339: …` and its frame, for each diagnostic; `""` for none. */
export function diagnosticsText(diagnostics: readonly Diagnostic[]): string {
  const sorted = [...diagnostics].sort((a, b) => rank(a) - rank(b));
  const { items, cut } = boundList(sorted, DIAGNOSTICS_SHOWN, "first", "diagnostics");
  return [...items.map((d, i) => bound(diagnosticText(d, i + 1), DIAGNOSTIC_CHARS)), ...(cut ? [cut] : [])].join("\n");
}

function diagnosticText(d: Diagnostic, n: number): string {
  const where = d.line > 0 ? `line ${d.line}, column ${d.column}` : "the script";
  const code = typeof d.code === "number" ? `TS${d.code}` : d.code;
  const head = `${n}. ${where}: ${d.category} ${code}: ${indent(d.message, "   ").trimStart()}`;
  return d.frame === "" ? head : `${head}\n${indent(d.frame, "   ")}`;
}

function rank(d: Diagnostic): number {
  return d.category === "error" ? 0 : 1;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}
