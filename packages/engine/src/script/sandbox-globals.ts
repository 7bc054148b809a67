/**
 * What the sandbox adds to the ES2023 built-ins, as declarations for the type-checker. It must
 * describe exactly what the sandbox provides: a name declared here but missing at run time
 * passes the check and fails in the run; a name missing here is an error the model cannot fix.
 * Features that add a global (`sleep`, `signal`, `fetch`…) append their declarations through
 * `sandboxGlobals(extra)` when enabled, so a toolset without them keeps them out of the check.
 */

/** Always present: `console`, whose lines go to the run's journal. */
export const SANDBOX_GLOBALS = `/** Writes a line to the run's log. Arguments are formatted like Node's console. */
interface Console {
  debug(...data: unknown[]): void;
  info(...data: unknown[]): void;
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
}
declare var console: Console;
`;

/**
 * The globals declarations with `extra` appended. Each entry is global declaration text (a
 * script, not a module: no top-level import or export), e.g. `declare function sleep(ms: number): Promise<void>;`.
 */
export function sandboxGlobals(extra: readonly string[] = []): string {
  return extra.length === 0 ? SANDBOX_GLOBALS : [SANDBOX_GLOBALS, ...extra].join("\n");
}
