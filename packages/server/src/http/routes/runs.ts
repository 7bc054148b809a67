import type { FastifyInstance } from "fastify";
import {
  getRunQuery,
  JOURNAL_LIMIT,
  journalPage,
  journalQuery,
  LIST_LIMIT,
  runListQuery,
  MAX_WAIT_SECONDS,
  run,
  runIdParams,
  runList,
  startedRun as startedRunSchema,
  startRunRequest,
  type GetRunQuery,
  type JournalPage,
  type JournalQuery,
  type RunListQuery,
  type Run,
  type RunIdParams,
  type RunList,
  type StartedRun,
  type StartRunRequest,
} from "@tapedeck/protocol/api";
import { mayActAs } from "../../tenancy/end-user-access.js";
import { libraryLimited, mayReachLibraryData } from "../../tenancy/library-access.js";
import { narrow } from "../../tenancy/scope.js";
import { reachableToolset } from "../../tenancy/toolset-access.js";
import { ApiError, forbidUnless } from "../api-error.js";
import { holdEnds, holdUntilSettled } from "../hold.js";
import { runView } from "../run-view.js";
import { ttlMs } from "../run-ttl.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { startedRun } from "./started-run.js";
import { visibleRun } from "./visible-run.js";

const LABEL_PARAM = "label.";

export function runRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: StartRunRequest }>(
    "/runs",
    {
      schema: {
        summary: "Start a run",
        description:
          "Type-checks the script and starts a run (201). A script that does not type-check is refused (422 `script_refused`, with diagnostics) and no run is created. A caller limited to a namespace or labels starts runs inside them. " +
          "A run in a namespace uses that end user's credentials: only an unlimited key, or a key or token limited to that namespace, may start one there (403 otherwise). " +
          "When a run of the namespace was already started (or forked) with the same `idempotencyKey`, nothing is started: the answer is that run, with 200 and `existing: true` (409 if the caller cannot see it). " +
          "With a `ttl`, a run that has not ended by then is cancelled. With a `budget`, the run fails `budget_exceeded` past it. " +
          "Over a quota of the namespace or the key (runs at once, runs started per minute or day): 429 `quota_exceeded` with `Retry-After`.",
        tags: ["runs"],
        body: startRunRequest,
        response: { 200: startedRunSchema, 201: startedRunSchema, ...errors(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply): Promise<StartedRun> => {
      const { toolset, source, input, idempotencyKey: key, ttl, traceparent: trace, budget } = request.body;
      const caller = callerOf(request);
      const scope = caller.scope;
      const placed = narrow(scope, { namespace: request.body.namespace, labels: request.body.labels });
      if (!placed.ok) throw new ApiError("forbidden", placed.message);
      const { namespace: ns, labels: runLabels } = placed.scope;
      forbidUnless(mayActAs(caller, ns, "starting a run"));
      const engine = context.engine();
      await reachableToolset(context.store, caller, toolset);
      if (libraryLimited(caller, ns)) forbidUnless(mayReachLibraryData(caller, ns, [(await engine.toolset(toolset)).toolset], "starting a run"));
      await context.quotas.admitStart(caller, ns, key);
      const started = await engine.start({
        toolset,
        source,
        ...(input === undefined ? {} : { input }),
        ...(Object.keys(runLabels).length === 0 ? {} : { labels: runLabels }),
        ...(ns === undefined ? {} : { namespace: ns }),
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(ttl === undefined ? {} : { ttlMs: ttlMs(ttl) }),
        ...(trace === undefined ? {} : { traceparent: trace }),
        ...(budget === undefined ? {} : { budget }),
      });
      return startedRun(engine, started, reply, scope);
    },
  );

  app.get<{ Querystring: RunListQuery }>(
    "/runs",
    {
      schema: {
        summary: "List runs, newest first",
        description:
          "Filters: `status` (repeat it for several), `namespace`, and `label.<key>=<value>` (every one must match). Only runs inside the caller's scope are listed.",
        tags: ["runs"],
        querystring: runListQuery,
        response: { 200: runList, ...errors(400, 401) },
      },
    },
    async (request): Promise<RunList> => {
      const { status, namespace: ns, limit } = request.query;
      const wanted = Object.fromEntries(
        Object.entries(request.query)
          .filter(([key]) => key.startsWith(LABEL_PARAM))
          .map(([key, value]) => [key.slice(LABEL_PARAM.length), value as string]),
      );
      const filter = narrow(callerOf(request).scope, { namespace: ns, labels: wanted });
      // A filter that contradicts the caller's scope matches nothing the caller may see.
      if (!filter.ok) return { runs: [] };
      const records = await context.engine().listRuns({
        ...(status === undefined ? {} : { status }),
        ...(filter.scope.namespace === undefined ? {} : { namespace: filter.scope.namespace }),
        labels: filter.scope.labels,
        limit: limit ?? LIST_LIMIT.default,
        // One run whose row cannot be read is listed as damaged; the others as usual.
        includeDamaged: true,
      });
      return { runs: records.map(runView) };
    },
  );

  app.get<{ Params: RunIdParams; Querystring: GetRunQuery }>(
    "/runs/:id",
    {
      schema: {
        summary: "A run",
        description:
          `With \`wait\` (seconds, at most ${MAX_WAIT_SECONDS}), the answer is held until the run ends or parks (waits for a signal, an approval, a sleep…), or the time is up. ` +
          "With `next` too, a run parked now is held until it wakes and next ends or parks (to wait out a sleep or a workflow child).",
        tags: ["runs"],
        params: runIdParams,
        querystring: getRunQuery,
        response: { 200: run, ...errors(400, 401, 404) },
      },
    },
    async (request, reply): Promise<Run> => {
      const engine = context.engine();
      const scope = callerOf(request).scope;
      const found = await visibleRun(engine, scope, request.params.id);
      const wait = request.query.wait ?? 0;
      const next = request.query.next === true;
      if (wait === 0 || !(found.status === "running" || (next && found.status === "waiting"))) return runView(found);
      await holdUntilSettled(engine, found.id, wait, [holdEnds(context, request, reply)], next);
      return runView(await visibleRun(engine, scope, found.id));
    },
  );

  app.get<{ Params: RunIdParams; Querystring: JournalQuery }>(
    "/runs/:id/journal",
    {
      schema: {
        summary: "A page of a run's journal",
        description: "Entries with `index >= from`, in order. `next` is the `from` of the next page, when there is more.",
        tags: ["runs"],
        params: runIdParams,
        querystring: journalQuery,
        response: { 200: journalPage, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<JournalPage> => {
      const engine = context.engine();
      const found = await visibleRun(engine, callerOf(request).scope, request.params.id);
      const from = request.query.from ?? 0;
      const limit = request.query.limit ?? JOURNAL_LIMIT.default;
      const entries = await engine.journal(found.id, from, limit);
      const end = from + entries.length;
      return entries.length === limit || end < found.journalLength ? { entries, next: end } : { entries };
    },
  );
}
