import { OUTPUT_PAGE, type RunOutputPage } from "../output-page.js";
import type { JournalEntry } from "../run.js";
import { JOURNAL_LIMIT } from "./limits.js";
import { runIdParams } from "./runs.js";
import { schemaFor } from "./schema-for.js";

/**
 * A run read in pieces, for whoever has a bounded window (a model's context): its journal page by
 * page (`GET /v1/runs/:id/journal`) or one entry in full (`/journal/:index`), its output page by
 * page (`/output`).
 */

/** The query string of `GET /v1/runs/:id/journal`. */
export interface JournalQuery {
  /** The first entry's index. Default 0. */
  readonly from?: number;
  /** Entries at most. Default 100, at most 1000. */
  readonly limit?: number;
}

export const journalQuery = schemaFor<JournalQuery>()({
  type: "object",
  properties: {
    from: { type: "integer", minimum: 0 },
    limit: { type: "integer", minimum: 1, maximum: JOURNAL_LIMIT.max, description: `Default ${JOURNAL_LIMIT.default}.` },
  },
  additionalProperties: false,
});

/** `GET /v1/runs/:id/journal`. */
export interface JournalPage {
  readonly entries: readonly JournalEntry[];
  /** The `from` of the next page, when the journal has more entries. */
  readonly next?: number;
}

/** What every journal entry is said to be in the API's description. */
const JOURNAL_ENTRY_DESCRIPTION =
  "A journal entry: index, at, kind and what the kind holds. A call's outcome entry (call.completed, call.failed) may have `logs`: the lines its tool logged while answering ([{ level, message }], a user tool's console.*, at most 1,000 then one saying how many were dropped, secrets redacted); they are not the script's `log` entries.";

export const journalPage = schemaFor<JournalPage>()({
  type: "object",
  properties: { entries: { type: "array", items: { type: "object", description: JOURNAL_ENTRY_DESCRIPTION } }, next: { type: "integer" } },
  required: ["entries"],
});

/** `GET /v1/runs/:id/journal/:index`. */
export interface JournalEntryParams {
  readonly id: string;
  readonly index: number;
}

export const journalEntryParams = schemaFor<JournalEntryParams>()({
  type: "object",
  properties: { id: runIdParams.properties.id, index: { type: "integer", minimum: 0, description: "The entry's index, from 0." } },
  required: ["id", "index"],
  additionalProperties: false,
});

/** `GET /v1/runs/:id/journal/:index` answers the entry in full. */
export const journalEntry = schemaFor<JournalEntry>()({ type: "object", description: JOURNAL_ENTRY_DESCRIPTION });

/** The query string of `GET /v1/runs/:id/output`. */
export interface OutputQuery {
  /** Where the page starts, in UTF-16 code units. Default 0. */
  readonly offset?: number;
  /** Characters at most. Default 256 KiB, at most 1 MiB. */
  readonly limit?: number;
}

export const outputQuery = schemaFor<OutputQuery>()({
  type: "object",
  properties: {
    offset: { type: "integer", minimum: 0, description: "Default 0." },
    limit: { type: "integer", minimum: 1, maximum: OUTPUT_PAGE.max, description: `Default ${OUTPUT_PAGE.default}.` },
  },
  additionalProperties: false,
});

/** `GET /v1/runs/:id/output`: a page of a completed run's output (see `outputPage` of @tapedeck/protocol). */
export type { RunOutputPage };

export const runOutputPage = schemaFor<RunOutputPage>()({
  type: "object",
  properties: { text: { type: "string" }, offset: { type: "integer" }, total: { type: "integer" }, nextOffset: { type: "integer" } },
  required: ["text", "offset", "total"],
});
