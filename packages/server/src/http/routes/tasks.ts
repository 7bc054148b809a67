import type { FastifyInstance } from "fastify";
import {
  completeTaskRequest,
  failTaskRequest,
  heartbeatRequest,
  leaseAnswer,
  MAX_POLL_WAIT_MS,
  polledTasks,
  pollTasksRequest,
  taskParams,
  type CompleteTaskRequest,
  type FailTaskRequest,
  type HeartbeatRequest,
  type LeaseAnswer,
  type PolledTasks,
  type PollTasksRequest,
  type TaskParams,
} from "@tapedeck/protocol/api";
import { holdEnds } from "../hold.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

/**
 * Host tool calls for workers: a long poll claims them (with a lease), then each is heartbeat,
 * completed or failed with its lease. A worker sees only the calls of runs inside its key's or
 * token's scope; a task outside it answers `lost`, as one that does not exist. Lease answers
 * are 200s with a status: each is an expected outcome a worker acts on, not an error.
 */
export function taskRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: PollTasksRequest }>(
    "/tasks/poll",
    {
      schema: {
        summary: "Claim host tool calls (long poll)",
        description: `Answers at once with the waiting calls of the named tools (at most \`max\`), else holds the request until one arrives or \`waitMs\` (at most ${MAX_POLL_WAIT_MS}) has passed (then \`tasks\` is empty). Each task is claimed with a lease: heartbeat within its \`heartbeatTimeoutMs\`, or the call is interrupted and follows its policy (sent again to a worker, or \`outcomeUnknown\`).`,
        tags: ["tasks"],
        body: pollTasksRequest,
        response: { 200: polledTasks, ...errors(400, 401, 403) },
      },
    },
    async (request, reply): Promise<PolledTasks> => {
      context.ensureOpen();
      const { tools, waitMs, max, toolset } = request.body;
      const caller = callerOf(request);
      const polled = context.workers.polling(caller.keyId, tools, toolset);
      try {
        const tasks = await context.hostTasks.poll({
          scope: caller.scope,
          tools,
          waitMs: waitMs ?? MAX_POLL_WAIT_MS,
          max: max ?? 1,
          ...(toolset === undefined ? {} : { toolset }),
          signal: holdEnds(context, request, reply),
        });
        return { tasks };
      } finally {
        polled();
      }
    },
  );

  app.post<{ Params: TaskParams; Body: HeartbeatRequest }>(
    "/tasks/:id/heartbeat",
    {
      schema: {
        summary: "Keep a task's lease",
        tags: ["tasks"],
        params: taskParams,
        body: heartbeatRequest,
        response: { 200: leaseAnswer, ...errors(400, 401) },
      },
    },
    async (request): Promise<LeaseAnswer> => {
      context.ensureOpen();
      context.workers.answered(callerOf(request).keyId);
      return { status: await context.hostTasks.heartbeat(callerOf(request).scope, request.params.id, request.body.lease) };
    },
  );

  app.post<{ Params: TaskParams; Body: CompleteTaskRequest }>(
    "/tasks/:id/complete",
    {
      schema: {
        summary: "Answer a task with the tool's result",
        tags: ["tasks"],
        params: taskParams,
        body: completeTaskRequest,
        response: { 200: leaseAnswer, ...errors(400, 401, 413) },
      },
    },
    async (request): Promise<LeaseAnswer> => {
      context.ensureOpen();
      context.workers.answered(callerOf(request).keyId);
      return { status: await context.hostTasks.complete(callerOf(request).scope, request.params.id, request.body.lease, request.body.result ?? null) };
    },
  );

  app.post<{ Params: TaskParams; Body: FailTaskRequest }>(
    "/tasks/:id/fail",
    {
      schema: {
        summary: "Answer a task with a failure",
        description:
          "The script gets a `ToolError` with this code and message. A failure is an answer, never retried (a worker that cannot answer lets the lease lapse instead: an interruption).",
        tags: ["tasks"],
        params: taskParams,
        body: failTaskRequest,
        response: { 200: leaseAnswer, ...errors(400, 401) },
      },
    },
    async (request): Promise<LeaseAnswer> => {
      context.ensureOpen();
      context.workers.answered(callerOf(request).keyId);
      return { status: await context.hostTasks.fail(callerOf(request).scope, request.params.id, request.body.lease, request.body.error) };
    },
  );
}
