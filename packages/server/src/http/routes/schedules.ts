import { EngineError, type Engine, type Schedule as EngineSchedule } from "@tapedeck/engine";
import type { FastifyInstance } from "fastify";
import {
  backfillRequest,
  createScheduleRequest,
  deleted,
  fire,
  fireList,
  FIRES_LIMIT,
  firesQuery,
  schedule,
  scheduleList,
  scheduleListQuery,
  scheduleParams,
  SCHEDULES_LIMIT,
  type BackfillRequest,
  type CreateScheduleRequest,
  type Deleted,
  type Fire,
  type FireList,
  type FiresQuery,
  type Schedule,
  type ScheduleList,
  type ScheduleListQuery,
  type ScheduleParams,
} from "@tapedeck/protocol/api";
import { mayActAs } from "../../tenancy/end-user-access.js";
import { libraryLimited, mayReachLibraryData } from "../../tenancy/library-access.js";
import { narrow, sees, type Scope } from "../../tenancy/scope.js";
import { reachableToolset } from "../../tenancy/toolset-access.js";
import { ApiError, forbidUnless } from "../api-error.js";
import type { Caller } from "../auth/caller.js";
import { engineProblems, scheduleOptions } from "../schedules/schedule-request.js";
import { fireView, scheduleView } from "../schedules/schedule-view.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

const LABEL_PARAM = "label.";

/**
 * Schedules (`engine.schedules`, docs/design/schedules.md) over HTTP. Managed with API keys: a
 * schedule outlives any end user's token, so a token cannot make one. A schedule belongs to the
 * scope it was created in (the key's, narrowed by `namespace` and `labels`), and its runs carry
 * that namespace and those labels: a key sees the schedules inside its scope only, every other
 * answers as a missing one (404). Every `tapedeck serve` on the store fires them.
 */
export function scheduleRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: CreateScheduleRequest }>(
    "/schedules",
    {
      schema: {
        summary: "Create a schedule",
        description:
          "Starts a workflow of the toolset (`workflow`) or a script (`source`) on a cron expression in an IANA time zone (`cron`, `timezone`) or an interval (`every`), from `startAt` to `endAt` or for `maxFires` fires. " +
          "`overlap` says what a fire does while an earlier fire's run has not ended (skip, buffer_one, allow, cancel_previous); `catchup` which fires missed while no server ran start (latest, all, none, within `catchupWindow`). " +
          "Each fire starts one run, whatever number of servers share the store, with the schedule's labels, namespace and the label `tapedeck.schedule: <id>`. " +
          "A schedule that is not right is refused whole (400, every problem named; a script that does not type-check: 422 `script_refused` with diagnostics). An API key only.",
        tags: ["schedules"],
        body: createScheduleRequest,
        response: { 201: schedule, ...errors(400, 401, 403, 404, 422) },
      },
    },
    async (request, reply): Promise<Schedule> => {
      const caller = keyCaller(callerOf(request));
      const placed = narrow(caller.scope, { namespace: request.body.namespace, labels: request.body.labels });
      if (!placed.ok) throw new ApiError("forbidden", placed.message);
      const { namespace: ns } = placed.scope;
      forbidUnless(mayActAs(caller, ns, "creating a schedule"));
      const engine = context.engine();
      await reachableToolset(context.store, caller, request.body.toolset);
      if (libraryLimited(caller, ns))
        forbidUnless(mayReachLibraryData(caller, ns, [(await engine.toolset(request.body.toolset)).toolset], "creating a schedule"));
      const asked = scheduleOptions(request.body, placed.scope);
      // A duration of the API's that did not parse reaches the engine as NaN, which it refuses: its problems and the route's are said together.
      const created = await engine.schedules.create(asked.options);
      if (created.kind === "created") {
        void reply.code(201);
        return scheduleView(created.schedule);
      }
      const problems = [...asked.problems, ...engineProblems(created.problems, asked)];
      const { diagnostics } = created;
      if (problems.length === 0)
        throw new ApiError(
          "script_refused",
          "The schedule's script does not type-check; nothing was saved. Fix what the diagnostics say and create it again.",
          {
            diagnostics,
          },
        );
      throw new ApiError(
        "invalid_request",
        `The schedule was refused, nothing was saved: ${problems.map((problem, n) => `(${n + 1}) ${problem}`).join("; ")}.`,
        diagnostics.length === 0 ? {} : { diagnostics },
      );
    },
  );

  app.get<{ Querystring: ScheduleListQuery }>(
    "/schedules",
    {
      schema: {
        summary: "List schedules, oldest first",
        description:
          "Filters: `namespace` and `label.<key>=<value>` (every one must match). Only schedules inside the caller's scope are listed, each with its next fire times. `next` is the `after` of the next page.",
        tags: ["schedules"],
        querystring: scheduleListQuery,
        response: { 200: scheduleList, ...errors(400, 401, 403) },
      },
    },
    async (request): Promise<ScheduleList> => {
      const { namespace: ns, limit: asked, after } = request.query;
      const wanted = Object.fromEntries(
        Object.entries(request.query)
          .filter(([key]) => key.startsWith(LABEL_PARAM))
          .map(([key, value]) => [key.slice(LABEL_PARAM.length), value as string]),
      );
      const filter = narrow(keyCaller(callerOf(request)).scope, { namespace: ns, labels: wanted });
      // A filter that contradicts the caller's scope matches nothing the caller may see.
      if (!filter.ok) return { schedules: [] };
      const limit = asked ?? SCHEDULES_LIMIT.default;
      const found = await context.engine().schedules.list({
        ...(filter.scope.namespace === undefined ? {} : { namespace: filter.scope.namespace }),
        labels: filter.scope.labels,
        limit,
        ...(after === undefined ? {} : { after }),
      });
      const last = found.at(-1);
      return { schedules: found.map(scheduleView), ...(found.length === limit && last ? { next: last.id } : {}) };
    },
  );

  app.get<{ Params: ScheduleParams }>(
    "/schedules/:id",
    {
      schema: {
        summary: "A schedule, with its next fire times",
        description: "Its runs: `GET /v1/runs?label.tapedeck.schedule=<id>`; what became of each fire: `GET /v1/schedules/:id/fires`.",
        tags: ["schedules"],
        params: scheduleParams,
        response: { 200: schedule, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<Schedule> => scheduleView(await visibleSchedule(context.engine(), callerScope(request), request.params.id)),
  );

  app.get<{ Params: ScheduleParams; Querystring: FiresQuery }>(
    "/schedules/:id/fires",
    {
      schema: {
        summary: "A schedule's fires, newest first",
        description:
          "Each fire: its time, its kind (scheduled, trigger, backfill), what became of it (started and its run, skipped or buffered by the overlap policy and why, failed and why). `before`: the last `fireAt` of the previous page.",
        tags: ["schedules"],
        params: scheduleParams,
        querystring: firesQuery,
        response: { 200: fireList, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<FireList> => {
      const engine = context.engine();
      const found = await visibleSchedule(engine, callerScope(request), request.params.id);
      const fires = await engine.schedules.fires(found.id, {
        limit: request.query.limit ?? FIRES_LIMIT.default,
        ...(request.query.before === undefined ? {} : { before: request.query.before }),
      });
      return { fires: fires.map(fireView) };
    },
  );

  for (const [action, summary, description] of [
    ["pause", "Pause a schedule", "No fire until it is resumed (a fire already claimed still starts). Pausing a paused schedule changes nothing."],
    ["resume", "Resume a schedule", "It fires again from now on: the fires due while it was paused are not caught up (backfill them if they are wanted)."],
  ] as const) {
    app.post<{ Params: ScheduleParams }>(
      `/schedules/:id/${action}`,
      { schema: { summary, description, tags: ["schedules"], params: scheduleParams, response: { 200: schedule, ...errors(400, 401, 403, 404) } } },
      async (request): Promise<Schedule> => {
        const engine = context.engine();
        const found = await visibleSchedule(engine, callerScope(request), request.params.id);
        return scheduleView(await engine.schedules[action](found.id));
      },
    );
  }

  app.post<{ Params: ScheduleParams }>(
    "/schedules/:id/trigger",
    {
      schema: {
        summary: "Fire a schedule now",
        description:
          "Fires now, paused or not, under the schedule's overlap policy: the answer is the fire, with its run when it started one (or why it was skipped). 409 when the schedule already has a fire at this very millisecond.",
        tags: ["schedules"],
        params: scheduleParams,
        response: { 200: fire, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request): Promise<Fire> => {
      const engine = context.engine();
      const found = await visibleSchedule(engine, callerScope(request), request.params.id);
      return fireView(await orScheduleNotFound(found.id, engine.schedules.trigger(found.id)));
    },
  );

  app.post<{ Params: ScheduleParams; Body: BackfillRequest }>(
    "/schedules/:id/backfill",
    {
      schema: {
        summary: "Fire a schedule's past times",
        description:
          "Fires each of the schedule's times in [from, to) that has no fire yet, oldest first, as if it had fired then (each run's idempotency key is its time's, so a backfill asked twice starts nothing more); they start whatever runs (overlap allow). `to` not after now; at most 1,000 times.",
        tags: ["schedules"],
        params: scheduleParams,
        body: backfillRequest,
        response: { 200: fireList, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<FireList> => {
      const engine = context.engine();
      const found = await visibleSchedule(engine, callerScope(request), request.params.id);
      const fires = await orScheduleNotFound(found.id, engine.schedules.backfill(found.id, { from: request.body.from, to: request.body.to }));
      return { fires: fires.map(fireView) };
    },
  );

  app.delete<{ Params: ScheduleParams }>(
    "/schedules/:id",
    {
      schema: {
        summary: "Delete a schedule",
        description: "It fires no more, and its fire log goes with it; its runs are left as they are (still listed by their label `tapedeck.schedule`).",
        tags: ["schedules"],
        params: scheduleParams,
        response: { 200: deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<Deleted> => {
      const engine = context.engine();
      const found = await visibleSchedule(engine, callerScope(request), request.params.id);
      await orScheduleNotFound(found.id, engine.schedules.delete(found.id));
      return { deleted: true };
    },
  );
}

/** The caller, if it holds an API key. */
function keyCaller(caller: Caller): Caller {
  if (caller.kind === "token")
    throw new ApiError("forbidden", "Schedules are managed with an API key, not an end user's token: a schedule outlives the token.");
  return caller;
}

function callerScope(request: Parameters<typeof callerOf>[0]): Scope {
  return keyCaller(callerOf(request)).scope;
}

/** The schedule, if it exists and is inside the scope; else the one 404 of a missing schedule. */
async function visibleSchedule(engine: Engine, scope: Scope, id: string): Promise<EngineSchedule> {
  const found = await orScheduleNotFound(id, engine.schedules.get(id));
  if (!sees(scope, { ...(found.namespace === undefined ? {} : { namespace: found.namespace }), labels: found.labels ?? {} })) throw scheduleNotFound(id);
  return found;
}

function scheduleNotFound(id: string): ApiError {
  return new ApiError("not_found", `No schedule ${id}. List the schedules this key sees with GET /v1/schedules.`);
}

/** Runs `work`, turning the engine's `not_found` for this schedule (deleted meanwhile) into the one answer for a missing schedule. */
async function orScheduleNotFound<T>(id: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof EngineError && error.code === "not_found") throw scheduleNotFound(id);
    throw error;
  }
}
