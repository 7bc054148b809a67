import type { Diagnostic } from "./diagnostic.js";

/**
 * The largest script Tapedeck checks and runs, UTF-8 bytes of TypeScript source. Scripts
 * orchestrate tool calls: real ones are a few hundred lines (1–30 KiB). Checking and transpiling
 * cost about 1.5 s and 0.8 s per 256 KiB on a loaded two-core machine (a 3.8 MB script took
 * 29 s), so 256 KiB leaves room for eight times the longest real script and keeps one check
 * within a few seconds. Data belongs in the run's input or behind a tool, not in the source.
 */
export const MAX_SCRIPT_BYTES = 256 * 1024;

/** Code of the diagnostic for a script past `MAX_SCRIPT_BYTES`. */
export const SCRIPT_TOO_LARGE = "script-too-large";

/** The error for a script past the limit, or undefined when it is within it. */
export function scriptSizeDiagnostic(source: string): Diagnostic | undefined {
  // Every UTF-16 unit is at most 3 bytes of UTF-8: most scripts are measured without encoding them.
  if (source.length * 3 <= MAX_SCRIPT_BYTES) return undefined;
  const bytes = Buffer.byteLength(source);
  if (bytes <= MAX_SCRIPT_BYTES) return undefined;
  return {
    line: 1,
    column: 1,
    code: SCRIPT_TOO_LARGE,
    category: "error",
    message:
      `The script is ${Math.ceil(bytes / 1024)} KiB; a script may be at most ${MAX_SCRIPT_BYTES / 1024} KiB of source. ` +
      "Scripts orchestrate tool calls: pass data in the run's input or fetch it with a tool instead of writing it into the script.",
    frame: "",
  };
}
