import { formatRunError, type JournalEntry } from "@tapedeck/protocol";
import type { Diagnostic, RunEnd } from "@tapedeck/engine";
import { escapeLine, escapeTerminal } from "../terminal-text.js";

/** Where a command writes. Tests give their own. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
  /** All of stdin, for commands that read a secret from it. Absent: there is no stdin. */
  readStdin?(): Promise<string>;
  /** Whether stdout is a terminal (a person reads it, nothing keeps it): `serve` prints the admin key there only then. Default false. */
  readonly stdoutIsTerminal?: boolean;
}

export const processOutput: Output = {
  stdoutIsTerminal: process.stdout.isTTY === true,
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
};

/**
 * `out` with every line escaped for a terminal (see `escapeTerminal`): what runs, tools and
 * servers wrote cannot drive the terminal. Every command prints through it (`cli` wraps its output).
 */
export function terminalOutput(out: Output): Output {
  return {
    stdout: (text) => out.stdout(escapeTerminal(text)),
    stderr: (text) => out.stderr(escapeTerminal(text)),
    ...(out.readStdin ? { readStdin: out.readStdin.bind(out) } : {}),
    ...(out.stdoutIsTerminal === undefined ? {} : { stdoutIsTerminal: out.stdoutIsTerminal }),
  };
}

/** Diagnostics with code frames, each at `file:line:column` (the script's path as the command was given it). */
export function formatDiagnostics(diagnostics: readonly Diagnostic[], file: string): string {
  return diagnostics.map((d) => `${file}:${d.line}:${d.column} - ${d.category} TS${d.code}: ${d.message}${d.frame ? `\n${d.frame}` : ""}`).join("\n\n");
}

/** Prints a run's end as `tapedeck run` does: the output JSON on stdout, or the error on stderr. Returns the exit code. */
export function printEnd(out: Output, end: RunEnd): number {
  if (end.status === "completed") {
    out.stdout(JSON.stringify(end.output, null, 2));
    return 0;
  }
  out.stderr(end.status === "failed" ? formatRunError(end.error) : `The run was cancelled: ${end.reason}`);
  return 1;
}

/**
 * One journal entry as `tapedeck show` prints it: a line, then the lines its tool logged (a user
 * tool's `console`), indented under it (a newline in a log line or a message is shown as `\n`).
 */
export function formatEntry(entry: JournalEntry): string {
  const line = escapeLine(entryLine(entry));
  const logs = (entry.kind === "call.completed" || entry.kind === "call.failed") && entry.logs !== undefined ? entry.logs : [];
  return [line, ...logs.map((log) => escapeLine(`${LOG_INDENT}[${log.level}] ${log.message}`))].join("\n");
}

/** A tool's log line starts under its call's `#seq`: past the index (5), the time (24) and the kind (14). */
const LOG_INDENT = " ".repeat(5 + 1 + 24 + 1 + 14 + 1);

function entryLine(entry: JournalEntry): string {
  const time = new Date(entry.at).toISOString();
  const head = `${String(entry.index).padStart(5)} ${time} ${entry.kind.padEnd(14)}`;
  switch (entry.kind) {
    case "run.started":
      return `${head} input=${short(entry.input)}`;
    case "call.scheduled":
      return `${head} #${entry.seq} ${entry.tool}(${short(entry.args)})`;
    case "call.rejected":
      return `${head} #${entry.seq} ${entry.tool}: ${entry.error.code}: ${entry.error.message}`;
    case "call.attempt":
      return `${head} #${entry.seq} attempt ${entry.attempt} (${entry.reason})`;
    case "call.throttled":
      return `${head} #${entry.seq} waits for its rate limit until ${new Date(entry.until).toISOString()}`;
    case "call.admitted":
      return `${head} #${entry.seq} took its place in its rate limit`;
    case "call.completed":
      return `${head} #${entry.seq} → ${short(entry.result)}${entry.reusedFrom ? ` (reused from ${entry.reusedFrom.run} #${entry.reusedFrom.seq})` : ""}`;
    case "call.failed":
      return `${head} #${entry.seq} ✗ ${entry.error.code}: ${entry.error.message}`;
    case "call.parked":
      return `${head} #${entry.seq} ${entry.reason}: ${entry.message}`;
    case "call.decided":
      return `${head} #${entry.seq} ${entry.decision}${entry.reason ? `: ${entry.reason}` : ""}`;
    case "call.sub":
      return `${head} #${entry.seq} ${entry.key} ${entry.tool}(${short(entry.args)}) ${entry.answer.ok ? `→ ${short(entry.answer.value)}` : `✗ ${entry.answer.error.code}`}`;
    case "log":
      return `${head} [${entry.level}] ${entry.message}`;
    case "run.completed":
      return `${head} output=${short(entry.output)}`;
    case "run.failed":
      return `${head} ${entry.error.kind}: ${entry.error.message}`;
    case "run.cancelled":
      return `${head} ${entry.reason}`;
    case "direct.bound":
      return `${head} ${entry.binding}`;
    case "direct.call":
      return `${head} ${entry.name} (${entry.toolCallId})${entry.call === undefined ? " answered without sending" : ` is #${entry.call}`}`;
    case "direct.asked":
      return `${head} #${entry.seq} ${entry.summary} (until ${new Date(entry.expiresAt).toISOString()})`;
    case "direct.always":
      return `${head} #${entry.seq} ${entry.tool} approved for the rest of the session`;
    case "direct.expired":
      return `${head} #${entry.seq} approval expired`;
  }
}

/** A value as JSON, cut at `max` characters. */
export function short(value: unknown, max = 120): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
