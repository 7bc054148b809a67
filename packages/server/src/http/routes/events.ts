import type { FastifyInstance } from "fastify";
import { eventsQuery, runEventsQuery, runIdParams, type EventsQuery, type RunEventsQuery, type RunIdParams } from "@tapedeck/protocol/api";
import { narrow } from "../../tenancy/scope.js";
import { ApiError } from "../api-error.js";
import { ChangePump } from "../events/change-pump.js";
import { RunEventPump } from "../events/run-event-pump.js";
import { SseStream } from "../events/sse-stream.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { visibleRun } from "./visible-run.js";

/** What a stream answers, as the OpenAPI document says it. */
const EVENT_STREAM = { description: "A stream of Server-Sent Events.", content: { "text/event-stream": { schema: { type: "string" } } } } as const;

/** The live event streams (`api/events.ts` in the protocol says what they carry; `docs/design/events.md` how). */
export function eventRoutes(app: FastifyInstance, context: ServerContext): void {
  app.get<{ Params: RunIdParams; Querystring: RunEventsQuery }>(
    "/runs/:id/events",
    {
      schema: {
        summary: "A run's live events (Server-Sent Events)",
        description:
          "The run's journal entries in order (event `entry`, id: the entry's index), the run whenever its status, waits or output change (event `run`, first on every connection), and `end` once it ended and its last entry was sent; then the stream closes. " +
          "Reconnecting with `Last-Event-ID` (or `after`) resumes after that entry: no entry is lost or repeated. A client that falls behind (more than 2 MiB unread) gets `lost` with the index to reload from, and the stream closes. Comments every 15 s keep it alive. A run outside the caller's scope is 404.",
        tags: ["runs"],
        params: runIdParams,
        querystring: runEventsQuery,
        response: { 200: EVENT_STREAM, ...errors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const engine = context.engine();
      const run = await visibleRun(engine, callerOf(request).scope, request.params.id);
      const after = lastEventIndex(request.headers["last-event-id"]) ?? request.query.after ?? -1;
      void reply.hijack();
      const stream = new SseStream(reply.raw, context.stopping);
      stream.open();
      new RunEventPump(engine, stream, run, after, request.log).start(context.store.notifier);
    },
  );

  app.get<{ Querystring: EventsQuery }>(
    "/events",
    {
      schema: {
        summary: "The live changes of the runs in the caller's scope (Server-Sent Events)",
        description:
          "First `ready` (its id: where the stream starts), then a `run` event (the run as `GET /v1/runs/:id` answers it) each time a run of the caller's scope that the filters match is created or changes status, waits or output, in the order the changes became durable on any node. " +
          "Filters: `status` (repeat it for several), `namespace`, `toolset`, and `label.<key>=<value>` (every one must match); a filter that contradicts the caller's scope matches nothing. " +
          "Reconnecting with `Last-Event-ID` resumes after that change: a run that changed meanwhile comes once, at its latest state. A client that falls behind (more than 2 MiB unread) gets `lost`, and the stream closes. Comments every 15 s keep it alive.",
        tags: ["runs"],
        querystring: eventsQuery,
        response: { 200: EVENT_STREAM, ...errors(400, 401) },
      },
    },
    async (request, reply) => {
      context.ensureOpen();
      const { status, namespace: ns, toolset } = request.query;
      const wanted = Object.fromEntries(
        Object.entries(request.query)
          .filter(([key]) => key.startsWith(LABEL_PARAM))
          .map(([key, value]) => [key.slice(LABEL_PARAM.length), value as string]),
      );
      const narrowed = narrow(callerOf(request).scope, { namespace: ns, labels: wanted });
      const header = request.headers["last-event-id"];
      const resumed = (Array.isArray(header) ? header[0] : header)?.trim();
      const store = context.store;
      if (resumed !== undefined && resumed !== "" && (await store.changedRuns(resumed, 0)) === undefined)
        throw new ApiError("invalid_request", `Last-Event-ID must be the id of an event this stream sent, not ${JSON.stringify(resumed.slice(0, 60))}.`);
      const after = resumed === undefined || resumed === "" ? await store.changesCursor() : resumed;
      void reply.hijack();
      const stream = new SseStream(reply.raw, context.stopping);
      stream.open();
      if (resumed === undefined || resumed === "") stream.send("ready", {}, after);
      // A filter that contradicts the caller's scope matches nothing: the stream only beats.
      if (!narrowed.ok) return;
      const filter = { scope: narrowed.scope, ...(status === undefined ? {} : { status }), ...(toolset === undefined ? {} : { toolset }) };
      new ChangePump(store, stream, filter, after, request.log).start();
    },
  );
}

const LABEL_PARAM = "label.";

/** The entry index a reconnecting client last had, from its `Last-Event-ID` (absent or empty: none). */
function lastEventIndex(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || text.trim() === "") return undefined;
  const index = Number(text);
  if (!Number.isSafeInteger(index) || index < -1)
    throw new ApiError(
      "invalid_request",
      `Last-Event-ID must be the index of a journal entry this stream sent (an integer), not ${JSON.stringify(text.slice(0, 40))}.`,
    );
  return index;
}
