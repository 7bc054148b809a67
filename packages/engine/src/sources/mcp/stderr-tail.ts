import type { Readable } from "node:stream";
import { LeakScanner } from "../../secrets/leak-scanner.js";

/**
 * The last lines a stdio MCP server wrote to stderr, kept so that a server that fails says why
 * ("None of the specified directories are accessible") instead of the SDK's "Connection closed".
 *
 * Invariants:
 * - Bounded: at most `STDERR_LINES` lines of at most `STDERR_LINE_CHARS` characters each; an
 *   endless line or a flood of output costs no more than that.
 * - The stream is always read (a full stderr pipe would block the server).
 * - What `text()` returns holds no secret Tapedeck handed the server (the values its `${VAR}`
 *   references expanded to) and no known key shape, and no control characters: it goes into
 *   error messages, the journal and terminals.
 */

/** Lines kept: enough for a stack trace's head and the message above it. */
export const STDERR_LINES = 12;
/** Characters kept per line: a line past this is cut (its start is what explains it). */
export const STDERR_LINE_CHARS = 500;
/** How long a failure waits for the rest of stderr once the process is closing (its last lines usually say why). */
const SETTLE_MS = 500;

export class StderrTail {
  readonly #lines: string[] = [];
  #partial = "";
  readonly #scanner: LeakScanner;
  readonly #ended: Promise<void>;

  /** Reads `stream` to its end; `secrets`: values to redact (what the server's environment references expanded to). */
  constructor(stream: Readable, secrets: readonly string[] = []) {
    this.#scanner = new LeakScanner(secrets);
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => this.#add(chunk));
    this.#ended = new Promise<void>((resolve) => {
      stream.once("end", resolve);
      stream.once("close", resolve);
      stream.once("error", () => resolve());
    });
  }

  /** Resolves once the stream ended (the process closed its stderr), or after a short bound. */
  async settled(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SETTLE_MS);
      timer.unref();
    });
    await Promise.race([this.#ended, bound]);
    clearTimeout(timer);
  }

  /** The kept lines (the unfinished last one included), redacted and escaped; empty when the server wrote nothing. */
  lines(): string[] {
    const lines = this.#partial === "" ? [...this.#lines] : [...this.#lines, this.#partial];
    return lines.slice(-STDERR_LINES).map((line) => escapeControls(this.#scanner.scanText(line).value));
  }

  /** `message`, with the server's last stderr lines after it when it wrote some. */
  explain(message: string): string {
    const lines = this.lines().filter((line) => line.trim() !== "");
    if (lines.length === 0) return message;
    return `${message}. The server's last stderr lines:\n${lines.map((line) => `  ${line}`).join("\n")}`;
  }

  #add(chunk: string): void {
    const parts = (this.#partial + chunk).split(/\r?\n/);
    this.#partial = cut(parts.pop() ?? "");
    for (const part of parts) this.#lines.push(cut(part));
    if (this.#lines.length > STDERR_LINES) this.#lines.splice(0, this.#lines.length - STDERR_LINES);
  }
}

function cut(line: string): string {
  return line.length <= STDERR_LINE_CHARS ? line : `${line.slice(0, STDERR_LINE_CHARS)}…`;
}

/** Control characters (escape sequences, carriage returns) as `\u{…}`: the text may reach a terminal. */
function escapeControls(line: string): string {
  return line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}
