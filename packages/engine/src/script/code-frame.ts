/**
 * A plain-text code frame, like Babel's but without colours: it goes to a model or a log,
 * not a terminal.
 *
 *     1 | import { github } from "tapedeck:tools";
 *   > 2 | const n: number = "x";
 *       |       ^
 *     3 | export default n;
 */

export interface CodeFrameOptions {
  /** Lines shown before and after the marked line. Default 2. */
  readonly context?: number;
}

/**
 * The same line breaks TypeScript counts (CR LF, LF, CR, LS, PS), so a diagnostic's line
 * number lands on the right line of the frame.
 */
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;

/**
 * Frames 1-based `line` and `column` of `source`. A column past the end of the line puts the
 * caret just after its last character; a line outside the source gives "".
 */
export function codeFrame(source: string, line: number, column: number, options: CodeFrameOptions = {}): string {
  const lines = source.split(LINE_BREAK);
  const marked = lines[line - 1];
  if (marked === undefined || line < 1) return "";
  const context = options.context ?? 2;
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + context);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const text = lines[n - 1] ?? "";
    const gutter = ` ${String(n).padStart(width)} |`;
    out.push(`${n === line ? ">" : " "}${gutter}${text === "" ? "" : ` ${text}`}`);
    if (n === line) out.push(`${" ".repeat(width + 3)}| ${caretPadding(marked, column)}^`);
  }
  return out.join("\n");
}

/** Keeps tabs as tabs so the caret stays under the column however wide a tab is shown. */
function caretPadding(text: string, column: number): string {
  const before = text.slice(0, Math.max(0, Math.min(column - 1, text.length)));
  return before.replace(/[^\t]/g, " ");
}
