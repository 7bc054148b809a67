import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";

/**
 * A window of a file's lines, read from an open file without loading the rest: the read stops
 * once the window is full and its budget spent, so a 10 GB log costs what its first lines cost.
 *
 * Invariants:
 * - Lines are split on "\n" (a "\r" before it stays, so the text is the file's), decoded as
 *   UTF-8 across chunk boundaries; invalid bytes become U+FFFD.
 * - At most `limit` lines and `maxChars` characters are returned; a line longer than
 *   `maxLineChars` is cut, and the cut is reported with the line's number. `totalLines` is
 *   known only when the read reached the end of the file.
 */

export interface LineWindow {
  readonly lines: readonly string[];
  /** 1-based number of the first line returned (`offset`). */
  readonly first: number;
  /** Lines the file has, when the read reached its end. */
  readonly totalLines?: number;
  /** Lines cut for being longer than `maxLineChars`, by number. */
  readonly cutLines: readonly number[];
  /** The window stopped at `maxChars` before `limit` lines. */
  readonly budgetSpent: boolean;
  /** The first 8 KiB hold a NUL byte: a binary file. */
  readonly binary: boolean;
}

export interface LineWindowOptions {
  readonly offset: number;
  readonly limit: number;
  readonly maxChars: number;
  readonly maxLineChars: number;
}

const CHUNK_BYTES = 64 * 1024;
const SNIFF_BYTES = 8 * 1024;

export async function readLines(file: FileHandle, { offset, limit, maxChars, maxLineChars }: LineWindowOptions): Promise<LineWindow> {
  const decoder = new StringDecoder("utf8");
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const lines: string[] = [];
  const cutLines: number[] = [];
  let chars = 0;
  let lineNumber = 1;
  let partial = "";
  /** Characters of `partial` dropped to keep memory bounded (a line of gigabytes). */
  let dropped = 0;
  let position = 0;
  let binary = false;
  let budgetSpent = false;
  const take = (line: string, extra = 0): boolean => {
    if (lineNumber >= offset) {
      let kept = line;
      if (kept.length + extra > maxLineChars) {
        kept = `${kept.slice(0, maxLineChars)}… [${kept.length + extra - maxLineChars} more characters on this line]`;
        cutLines.push(lineNumber);
      }
      if (lines.length > 0 && chars + kept.length > maxChars) {
        budgetSpent = true;
        return false;
      }
      lines.push(kept);
      chars += kept.length + 1;
    }
    lineNumber++;
    return lines.length < limit;
  };
  for (;;) {
    const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, position);
    if (position === 0 && buffer.subarray(0, Math.min(bytesRead, SNIFF_BYTES)).includes(0)) binary = true;
    if (binary) return { lines: [], first: offset, cutLines: [], budgetSpent: false, binary };
    if (bytesRead === 0) {
      const rest = partial + decoder.end();
      // A last line without "\n" is a line; an empty text after a final "\n" is not.
      if (rest !== "" && !take(rest, dropped)) return { lines, first: offset, cutLines, budgetSpent, binary };
      return { lines, first: offset, totalLines: lineNumber - 1, cutLines, budgetSpent, binary };
    }
    position += bytesRead;
    const parts = (partial + decoder.write(buffer.subarray(0, bytesRead))).split("\n");
    partial = parts.pop() ?? "";
    for (const [index, line] of parts.entries()) {
      if (!take(line, index === 0 ? dropped : 0)) return { lines, first: offset, cutLines, budgetSpent, binary };
      if (index === 0) dropped = 0;
    }
    // A line still growing past what any window keeps is not held whole in memory.
    if (partial.length > maxLineChars + 1) {
      dropped += partial.length - (maxLineChars + 1);
      partial = partial.slice(0, maxLineChars + 1);
    }
  }
}
