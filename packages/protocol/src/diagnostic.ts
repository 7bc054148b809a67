/**
 * One problem in a script, positioned for whoever must fix it (usually the model): what the
 * engine's checker reports and what the API and the SDK carry.
 */
export interface Diagnostic {
  /** 1-based line in the script; 0 when the problem is not in the script (`code: "internal"`). */
  readonly line: number;
  /** 1-based column (UTF-16 code units, as TypeScript counts); 0 with `line` 0. */
  readonly column: number;
  /** TypeScript's number (2322…), or one of Tapedeck's rule codes, or `"internal"`. */
  readonly code: number | string;
  readonly category: "error" | "warning";
  /** The whole message, a chain flattened with indented lines. */
  readonly message: string;
  /** A code frame of the script around the position ("" for an internal diagnostic without a file). */
  readonly frame: string;
}
