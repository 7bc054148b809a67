import type { BlobStore } from "../store/blob-store.js";
import type { ModelContent } from "./model-content.js";
import { FETCH_BLOB } from "./own-tools.js";
import { BLOB_HANDLE } from "./spill.js";
import { BYTES_PER_TOKEN } from "./token-estimate.js";

/**
 * `fetch_blob({ handle, offset })`: a spilled result read by character offset (UTF-16 code units,
 * JavaScript string indices, as `get_run` pages a run's output), in pages of at most
 * `BLOB_PAGE_BYTES` bytes of UTF-8.
 *
 * Invariants:
 * - Pages chained by `nextOffset` from 0 reassemble the text exactly (a property test): a page
 *   never ends between the halves of a surrogate pair and is never empty before the end.
 * - An offset inside a surrogate pair starts at the pair (the whole character).
 * - A handle is read only in the session given (`BlobStore`): another session's handle is unknown.
 */

/** A page fits a 16,000-token budget with room to spare (48 KiB / 3.5 bytes per token ≈ 14,000 tokens). */
export const BLOB_PAGE_BYTES = 48 * 1024;

/** What a page's header line takes at most (the handle twice and three offsets), kept out of its budget. */
const PAGE_HEADER_BYTES = 256;
/** The smallest page, however small the budget: paging must move on. */
const MIN_PAGE_BYTES = 256;

/**
 * The page size that keeps a `fetch_blob` answer within a result budget of `maxTokens` (the
 * session's: a page is a result the model reads like any other), at most `BLOB_PAGE_BYTES`.
 * Without it a 2,000-token session got pages of 49,152 characters.
 */
export function blobPageBytes(maxTokens: number): number {
  return Math.min(BLOB_PAGE_BYTES, Math.max(MIN_PAGE_BYTES, Math.floor(maxTokens * BYTES_PER_TOKEN) - PAGE_HEADER_BYTES));
}

export interface BlobPage {
  readonly text: string;
  readonly offset: number;
  readonly total: number;
  /** Where the next page starts, when there is more. */
  readonly nextOffset?: number;
}

/** The page of `text` from `offset` (clamped) of at most `maxBytes` UTF-8 bytes, at least one character before the end. */
export function blobPage(text: string, offset: number, maxBytes: number = BLOB_PAGE_BYTES): BlobPage {
  let start = Math.min(Math.max(0, Math.floor(offset)), text.length);
  if (start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))) start--;
  let end = start;
  let bytes = 0;
  while (end < text.length) {
    const code = text.codePointAt(end)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes && end > start) break;
    bytes += size;
    end += code >= 0x10000 ? 2 : 1;
  }
  return { text: text.slice(start, end), offset: start, total: text.length, ...(end < text.length ? { nextOffset: end } : {}) };
}

/**
 * Answers a `fetch_blob` call of the model in `session`, in pages of at most `pageBytes` (pass
 * less than the default when the session's budgets are smaller: a page should fit them). Never
 * throws for the model's mistakes: they are `isError` results.
 */
export async function fetchBlob(input: unknown, session: string, blobs: BlobStore, pageBytes: number = BLOB_PAGE_BYTES): Promise<ModelContent> {
  const args = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const { handle, offset = 0 } = args;
  if (typeof handle !== "string" || !BLOB_HANDLE.test(handle)) {
    return error(`${FETCH_BLOB} needs the handle a result's preview gave, like { "handle": "blob_…", "offset": 0 }; got ${JSON.stringify(handle) ?? "none"}.`);
  }
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) {
    return error(`${FETCH_BLOB}: offset must be a whole number of characters from 0, not ${JSON.stringify(offset)}; leave it out to read from the start.`);
  }
  const text = await blobs.get(session, handle);
  if (text === undefined) {
    return error(`There is no ${handle} in this session: a handle is valid only in the session whose result made it. Call the tool again to get a new one.`);
  }
  if (offset >= text.length && text.length > 0) {
    return error(
      `${handle} has ${text.length.toLocaleString("en-US")} characters; offset ${offset} is past its end. Read from an offset below ${text.length}.`,
    );
  }
  const page = blobPage(text, offset, pageBytes);
  const next = page.nextOffset !== undefined ? `next: ${FETCH_BLOB}({ "handle": "${handle}", "offset": ${page.nextOffset} })` : "this is the end";
  const header = `${handle}, characters ${page.offset}–${page.offset + page.text.length} of ${page.total} (${next}):`;
  return { parts: [{ type: "text", text: `${header}\n${page.text}` }], isError: false };
}

function error(text: string): ModelContent {
  return { parts: [{ type: "text", text }], isError: true };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
