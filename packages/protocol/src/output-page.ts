import type { JsonValue } from "./json.js";

/**
 * Pages of a run's output, as `GET /v1/runs/:id/output` serves them and the agent tools cut
 * them (`get_run({ run_id, offset })` means the same either way): the output as
 * `JSON.stringify(output, null, 2)`, offsets and limits in UTF-16 code units (JavaScript string
 * indices); a page never ends between the halves of a surrogate pair and is never empty before
 * the end.
 */
export interface RunOutputPage {
  readonly text: string;
  /** Where `text` starts in the whole text. */
  readonly offset: number;
  /** The length of the whole text. */
  readonly total: number;
  /** The `offset` of the next page, when there is more. */
  readonly nextOffset?: number;
}

/** Page sizes, characters: the default (a model's context holds it) and the most one page may be. */
export const OUTPUT_PAGE = { default: 256 * 1024, max: 1024 * 1024 } as const;

/** The output's JSON text, as it is paged. */
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

/**
 * `page` cut to at most `maxBytes` bytes of UTF-8 (a model's budget counts bytes, not UTF-16 code
 * units): never inside a character, and never empty before the end (a first character larger
 * than the budget is kept whole), so paging always moves on. Offsets stay in code units.
 */
export function pageWithinBytes(page: RunOutputPage, maxBytes: number): RunOutputPage {
  const { text } = page;
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const code = text.codePointAt(end)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes && end > 0) break;
    bytes += size;
    end += code >= 0x10000 ? 2 : 1;
  }
  if (end === text.length) return page;
  return { text: text.slice(0, end), offset: page.offset, total: page.total, nextOffset: page.offset + end };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
