/**
 * Text that came from a run (log lines, arguments, results, errors: written by scripts, tools
 * and MCP servers) must not drive the terminal it is printed to: an escape sequence can set the
 * window title, write the clipboard (OSC 52), clear the screen or move the cursor, a carriage
 * return overwrites what was printed, and bidi controls reorder what is shown. Every printer
 * of the CLI and of the server's log goes through `escapeTerminal`, which shows each such
 * character escaped, visibly, instead of sending it:
 * - C0 controls and DEL as `\x1b` (a carriage return as `\r`), except a newline, a tab and the
 *   carriage return of a CRLF line end;
 * - C1 controls (U+0080–U+009F), bidi controls and the line and paragraph separators as
 *   `\u202e`.
 * `JSON.stringify` leaves only the second group (and DEL) as they are, so JSON printed through
 * it stays JSON that parses to the same value. Escaping twice changes nothing more.
 */

/** C0 controls but tab and newline; CR unless it ends a CRLF line end. */
const C0 = /[\x00-\x08\x0b\x0c\x0e-\x1f]|\r(?!\n)/g;
/** DEL, C1 controls, the Arabic letter mark, LRM/RLM, LRE…RLO, LRI…PDI, the line and paragraph separators. */
const UNICODE = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** Both, and newline: for text printed on one line. */
const ANY_CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/** `text` with every control character escaped but newlines (and tabs): for what is printed as it is. */
export function escapeTerminal(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(C0, c0Escape).replace(UNICODE, unicodeEscape);
}

/** `text` on one line: newlines are escaped too (`\n`), for listings of one line per item. */
export function escapeLine(text: string): string {
  return escapeTerminal(text.replaceAll("\r\n", "\\r\\n").replaceAll("\n", "\\n"));
}

function c0Escape(c: string): string {
  return c === "\r" ? "\\r" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
}

function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
