/**
 * What the sandbox adds to the ES2023 built-ins, as declarations for the type-checker. It must
 * describe exactly what the sandbox provides: a name declared here but missing at run time
 * passes the check and fails in the run; a name missing here is an error the model cannot fix.
 * Features that add a global (`sleep`, `signal`, `fetch`…) append their declarations through
 * `sandboxGlobals(extra)` when enabled, so a toolset without them keeps them out of the check.
 */

/**
 * Always present: `console`, whose lines go to the run's journal, and the durable waits (each is
 * a journaled call: while a run waits it holds no memory, and it wakes after restarts).
 */
export const SANDBOX_GLOBALS = `/** Writes a line to the run's log. Arguments are formatted like Node's console. */
interface Console {
  debug(...data: unknown[]): void;
  info(...data: unknown[]): void;
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
}
declare var console: Console;

/** Milliseconds, or a number with a unit: "500ms", "30s", "10m", "2h", "10d", "1w", "1y" (365 days). */
type Duration = number | \`\${number}\${"ms" | "s" | "m" | "h" | "d" | "w" | "y"}\`;

/**
 * Waits durably, up to 10 years: the run holds no memory while it sleeps and wakes on time,
 * also after the engine restarts. \`await sleep("10d")\`.
 */
declare function sleep(duration: Duration): Promise<void>;

/**
 * Waits for the signal \`name\` (sent with signal_run, or POSTed to a \`webhook(name)\` URL)
 * and resolves with its payload. A signal sent before this call is kept for it; each signal is
 * taken by one call. With \`timeout\`, rejects with a ToolError of code "timeout" if none comes.
 */
declare function signal<T = unknown>(name: string, options?: { timeout?: Duration }): Promise<T>;

/** A URL bound to this run: a POST of JSON to it becomes the signal \`name\` with the body as payload. */
declare function webhook(name: string): Promise<{ url: string }>;

/** Runs \`callback\` after \`ms\` milliseconds: a durable \`sleep(ms)\`. An error it throws fails the run. */
declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, ms?: number, ...args: A): number;
/** Keeps a pending \`setTimeout\` callback from running. */
declare function clearTimeout(id: number | undefined): void;
`;

/**
 * The globals declarations with `extra` appended. Each entry is global declaration text (a
 * script, not a module: no top-level import or export), e.g. `declare function sleep(ms: number): Promise<void>;`.
 */
export function sandboxGlobals(extra: readonly string[] = []): string {
  return extra.length === 0 ? SANDBOX_GLOBALS : [SANDBOX_GLOBALS, ...extra].join("\n");
}
