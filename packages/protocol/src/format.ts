import type { RunError } from "./run.js";

/**
 * Text a model reads about a run's error: what went wrong, where in its script, and what to
 * do next. Used by the CLI, and by the agent tools so both say the same thing.
 */
export function formatRunError(error: RunError): string {
  const lines: string[] = [];
  const where = error.position ? ` at line ${error.position.line}, column ${error.position.column}` : "";
  const title = error.name && error.kind === "script" ? `${error.name}: ${error.message}` : error.message;
  lines.push(`${headline(error)}${where}: ${title}`);
  if (error.failure) lines.push(`  code: ${error.failure.code}${error.failure.retryable ? " (retryable)" : ""}`);
  if (error.call) lines.push(`  call: #${error.call.seq} ${error.call.tool}`);
  if (error.frame) lines.push("", error.frame);
  if (error.stack && error.kind === "script") {
    const frames = error.stack.split("\n").filter((l) => l.trim().startsWith("at "));
    if (frames.length > 0) lines.push("", ...frames.slice(0, 10));
  }
  return lines.join("\n");
}

function headline(error: RunError): string {
  switch (error.kind) {
    case "script":
      return error.failure ? "The script did not catch a failed tool call" : "The script threw";
    case "limit":
      return "The script went past a limit";
    case "divergence":
      return "The run could not be replayed";
    case "deadlock":
      return "The script can never finish";
    case "output":
      return "The script's output was refused";
    case "internal":
      return "Tapedeck failed";
  }
}
