/**
 * Where JSON text first goes wrong, for a failure a model can act on. V8's messages give a
 * position for some errors and quote the whole text for others ("Unexpected token '}', "…" is
 * not valid JSON"), so the position is found the same way for every error: the longest prefix
 * that could still begin a JSON text ends where the text goes wrong. A prefix that is viable
 * stays viable when cut shorter, so a binary search finds it in O(log n) parses.
 */

export interface JsonErrorPosition {
  /** UTF-16 offset of the first character that cannot be part of a JSON text (the length when the text ends too early). */
  readonly offset: number;
  /** 1-based line and column of `offset`. */
  readonly line: number;
  readonly column: number;
  /** V8's message, without the text it quotes. */
  readonly reason: string;
}

/** The position of the error in `text`, which `JSON.parse` refused. */
export function jsonErrorPosition(text: string, error: Error): JsonErrorPosition {
  let low = 0; // viable
  let high = text.length; // the whole text: not viable unless it only ended too early
  if (viable(text)) low = high;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (viable(text.slice(0, middle))) low = middle;
    else high = middle;
  }
  const offset = low === text.length ? text.length : low;
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { offset, line, column, reason: reasonOf(error.message) };
}

/** Whether `prefix` can be continued into a JSON text: it parses, or its only fault is that it ends. */
function viable(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (error) {
    const message = (error as Error).message;
    if (/end of JSON input|Unterminated string/.test(message)) return true;
    const position = /at position (\d+)/.exec(message);
    return position !== null && Number(position[1]) >= prefix.length;
  }
}

function reasonOf(message: string): string {
  return message.replace(/, ".*" is not valid JSON$/s, "").replace(/ in JSON at position \d+.*$/s, "");
}
