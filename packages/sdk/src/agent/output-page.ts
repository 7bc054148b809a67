/**
 * Pages of a run's output, counted as the server's `GET /v1/runs/:id/output` counts them: the
 * output as `JSON.stringify(output, null, 2)`, offsets and limits in UTF-16 code units
 * (JavaScript string indices), a page never ends between the halves of a surrogate pair and is
 * never empty before the end. So `get_run({ run_id, offset })` means the same whether its page is
 * cut here from `Run.output` or read from the server.
 */
import type { JsonValue } from "@tapedeck/protocol";
import type { RunOutputPage } from "../api.js";

/** The output's JSON text, as the server pages it. */
export function outputText(output: JsonValue): string {
  return JSON.stringify(output, null, 2);
}

/** The page of `output` from `offset` (clamped to the text) of at most `limit` characters. */
export function outputPage(output: JsonValue, offset: number, limit: number): RunOutputPage {
  const text = outputText(output);
  const start = Math.min(Math.max(0, Math.floor(offset)), text.length);
  const end = pageEnd(text, start, Math.max(1, Math.floor(limit)));
  return { text: text.slice(start, end), offset: start, total: text.length, ...(end < text.length ? { nextOffset: end } : {}) };
}

/** Where a page from `offset` of at most `limit` characters ends. */
function pageEnd(text: string, offset: number, limit: number): number {
  const end = Math.min(text.length, offset + limit);
  if (end === text.length || !isHighSurrogate(text.charCodeAt(end - 1))) return end;
  // A page of one character that is half a pair takes the whole pair, so paging always moves on.
  return end - 1 > offset ? end - 1 : end + 1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
