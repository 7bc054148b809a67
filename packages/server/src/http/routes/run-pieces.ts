import type { FastifyInstance } from "fastify";
import type { RunRecord } from "@tapedeck/engine";
import { OUTPUT_PAGE, outputPage, terminalStatuses, type JournalEntry } from "@tapedeck/protocol";
import {
  journalEntry,
  journalEntryParams,
  outputQuery,
  runIdParams,
  runOutputPage,
  type JournalEntryParams,
  type OutputQuery,
  type RunIdParams,
  type RunOutputPage,
} from "@tapedeck/protocol/api";
import { ApiError } from "../api-error.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { visibleRun } from "./visible-run.js";

/**
 * A run read in pieces, for whoever has a bounded window (a model's context): its output page by
 * page, and one journal entry in full. Both answer a run outside the caller's scope as missing.
 */

export function runPieceRoutes(app: FastifyInstance, context: ServerContext): void {
  app.get<{ Params: RunIdParams; Querystring: OutputQuery }>(
    "/runs/:id/output",
    {
      schema: {
        summary: "A page of a completed run's output, as JSON text",
        description:
          "The output as `JSON.stringify(output, null, 2)`, from `offset`, at most `limit` characters. Offsets count UTF-16 code units (JavaScript string indices); a page never ends inside a surrogate pair. " +
          "`nextOffset` is the `offset` of the next page, when there is more. 409 while the run has no output (it has not completed).",
        tags: ["runs"],
        params: runIdParams,
        querystring: outputQuery,
        response: { 200: runOutputPage, ...errors(400, 401, 404, 409) },
      },
    },
    async (request): Promise<RunOutputPage> => {
      const found = await visibleRun(context.engine(), callerOf(request).scope, request.params.id);
      if (found.status !== "completed") throw new ApiError("conflict", noOutput(found));
      const offset = request.query.offset ?? 0;
      const page = outputPage(found.output ?? null, offset, request.query.limit ?? OUTPUT_PAGE.default);
      if (offset > page.total)
        throw new ApiError(
          "invalid_request",
          `querystring.offset ${offset} is past the end of run ${found.id}'s output, which is ${page.total} characters long.`,
        );
      return page;
    },
  );

  app.get<{ Params: JournalEntryParams }>(
    "/runs/:id/journal/:index",
    {
      schema: {
        summary: "One entry of a run's journal",
        description: "The entry at `index` (from 0), in full. 404 past the end of the journal.",
        tags: ["runs"],
        params: journalEntryParams,
        response: { 200: journalEntry, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<JournalEntry> => {
      const engine = context.engine();
      const found = await visibleRun(engine, callerOf(request).scope, request.params.id);
      const { index } = request.params;
      const [entry] = await engine.journal(found.id, index, 1);
      if (entry) return entry;
      const length = (await engine.getRun(found.id)).journalLength;
      throw new ApiError(
        "not_found",
        `Run ${found.id} has no journal entry ${index}: its journal has ${length} entr${length === 1 ? "y" : "ies"}${length === 0 ? "" : ` (0 to ${length - 1})`}.`,
      );
    },
  );
}

function noOutput(run: RunRecord): string {
  if (terminalStatuses.includes(run.status)) return `Run ${run.id} ended ${run.status}: it has no output (GET /v1/runs/${run.id} says why).`;
  return `Run ${run.id} has no output yet: it is ${run.status}. Its output is here once it completes (GET /v1/runs/${run.id}?wait=60 waits for it to end or park).`;
}
