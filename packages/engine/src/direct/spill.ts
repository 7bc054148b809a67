import { sha256Hex } from "../util/ids.js";
import type { BlobStore } from "../store/blob-store.js";
import type { Overflow } from "./direct-options.js";
import type { ModelContent, ModelPart } from "./model-content.js";
import { FETCH_BLOB } from "./own-tools.js";
import { estimateTokens } from "./token-estimate.js";

/**
 * Results over their budget (seed 002's spill): the model gets a preview — the first and last
 * `PREVIEW_LINES` lines and the sizes — and, under `spill`, a handle that `fetch_blob` reads the
 * whole text by (`fetch-blob.ts`); under `truncate` the rest is not kept.
 *
 * Invariants:
 * - A pure function of the content, the budget and the session (the handle is a hash of the
 *   session and the text): a result answered again from the journal spills the same way, to the
 *   same handle, and storing it again is a no-op.
 * - The preview itself stays within the budget: each preview line is cut at `PREVIEW_LINE_MAX`
 *   characters, and the preview at half the budget, so a single line of 1 MB JSON is previewed
 *   too.
 * - Images are kept as they are (only text is counted and spilled).
 */

/** Lines shown from each end (seed 002). */
export const PREVIEW_LINES = 20;
/** A preview line longer than this is cut: 40 lines of it stay far below any budget. */
export const PREVIEW_LINE_MAX = 400;

export interface SpillContext {
  readonly session: string;
  /** The tool as the model calls it, named in the preview. */
  readonly tool: string;
  readonly blobs: BlobStore;
}

export interface Budget {
  readonly maxTokens: number;
  readonly overflow: Overflow;
}

/** `content` within `budget`: as it is when it fits, else its preview (and its blob, under `spill`). */
export async function withinBudget(content: ModelContent, budget: Budget, context: SpillContext): Promise<ModelContent> {
  const whole = content.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
  const tokens = estimateTokens(whole);
  if (tokens <= budget.maxTokens) return content;
  let handle: string | undefined;
  if (budget.overflow === "spill") {
    handle = blobHandle(context.session, whole);
    await context.blobs.put(context.session, handle, whole);
  }
  const images = content.parts.filter((p): p is Extract<ModelPart, { type: "image" }> => p.type === "image");
  const preview = previewText(whole, { tool: context.tool, tokens, budget, ...(handle !== undefined ? { handle } : {}) });
  return { parts: [{ type: "text", text: preview }, ...images], isError: content.isError, ...(content.lossy ? { lossy: true as const } : {}) };
}

/** `blob_` + 40 hex digits of SHA-256 over the session and the text. */
export function blobHandle(session: string, text: string): string {
  return `blob_${sha256Hex(`${session}\u0000${text}`).slice(0, 40)}`;
}

export const BLOB_HANDLE = /^blob_[0-9a-f]{40}$/;

function previewText(whole: string, about: { tool: string; tokens: number; budget: Budget; handle?: string }): string {
  const lines = whole.split("\n");
  const size = `${count(lines.length, "line")}, ${count(whole.length, "character")}, about ${about.tokens.toLocaleString("en-US")} tokens`;
  const head =
    `The result of ${about.tool} is too large to show whole (${size}; the budget is ${about.budget.maxTokens.toLocaleString("en-US")} tokens). ` +
    (about.handle !== undefined
      ? `It is saved as ${about.handle}: read it with ${FETCH_BLOB}({ "handle": "${about.handle}", "offset": 0 }), page by page, where you need more than this preview.`
      : "Only this preview was kept: call the tool with narrower arguments (a filter, a smaller page) if you need more.");
  const shown =
    lines.length <= 2 * PREVIEW_LINES
      ? [
          `All ${count(lines.length, "line")}${lines.some((l) => l.length > PREVIEW_LINE_MAX) ? `, long lines cut at ${PREVIEW_LINE_MAX} characters` : ""}:`,
          ...lines.map(cutLine),
        ]
      : [
          `First ${PREVIEW_LINES} lines:`,
          ...lines.slice(0, PREVIEW_LINES).map(cutLine),
          `[… ${count(lines.length - 2 * PREVIEW_LINES, "line")} not shown …]`,
          `Last ${PREVIEW_LINES} lines:`,
          ...lines.slice(-PREVIEW_LINES).map(cutLine),
        ];
  const cap = Math.max(1000, Math.floor((about.budget.maxTokens * 3.5) / 2));
  return cutPreview([head, ...shown].join("\n"), cap);
}

function cutLine(line: string): string {
  if (line.length <= PREVIEW_LINE_MAX) return line;
  let end = PREVIEW_LINE_MAX;
  if (isHighSurrogate(line.charCodeAt(end - 1))) end--;
  return `${line.slice(0, end)}… [${count(line.length - end, "more character")} on this line]`;
}

/** A preview cut to `max` characters when even 40 short lines are too many for a tiny budget. */
function cutPreview(preview: string, max: number): string {
  if (preview.length <= max) return preview;
  let end = max;
  if (isHighSurrogate(preview.charCodeAt(end - 1))) end--;
  return `${preview.slice(0, end)}\n[… preview cut to fit the budget …]`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function count(n: number, unit: string): string {
  return `${n.toLocaleString("en-US")} ${unit}${n === 1 ? "" : "s"}`;
}
