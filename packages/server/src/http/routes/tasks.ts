import type { FastifyInstance } from "fastify";
import { MAX_POLL_MS } from "@tapedeck/engine";
import type { CompleteTaskRequest, FailTaskRequest, HeartbeatRequest, LeaseAnswer, PolledTasks, PollTasksRequest } from "@tapedeck/sdk";
import { holdEnds } from "../hold.js";
import { anyJson, errors, id } from "../schemas.js";
import type { ServerContext } from "../server-context.js";
import { callerOf } from "./request-caller.js";

/** Tasks one poll may claim: enough to fill a busy worker, few enough that one poll cannot hoard a queue. */
const MAX_TASKS_PER_POLL = 100;
/** Tools one worker may name (each `group.name` or `group.*`). */
const MAX_TOOLS = 1000;

const toolPattern = {
  type: "string",
  maxLength: 300,
  pattern: "^[A-Za-z_$][A-Za-z0-9_$]*\\..+$",
  description: "`group.name`, or `group.*` for every tool of a group.",
} as const;
const taskParams = {
  type: "object",
  properties: { id: { ...id, description: "A task id (`task_…`)." } },
  required: ["id"],
  additionalProperties: false,
} as const;
const lease = { type: "string", minLength: 1, maxLength: 200, description: "The lease the poll gave with the task." } as const;
const leaseAnswer = {
  type: "object",
  description:
    "`ok`: noted. `cancelled`: the run no longer wants the call; stop (an answer is dropped). `lost`: this lease does not hold the task (it lapsed, or there is no such task); stop.",
  properties: { status: { type: "string", enum: ["ok", "cancelled", "lost"] } },
} as const;
const task = {
  type: "object",
  properties: {
    id: { type: "string" },
    tool: { type: "string" },
    args: anyJson,
    idempotencyKey: { type: "string" },
    runId: { type: "string" },
    seq: { type: "integer" },
    attempt: { type: "integer" },
    traceparent: { type: "string" },
    lease: { type: "string" },
    heartbeatTimeoutMs: { type: "integer" },
  },
} as const;

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
        description: `Answers at once with the waiting calls of the named tools (at most \`max\`), else holds the request until one arrives or \`waitMs\` (at most ${MAX_POLL_MS}) has passed (then \`tasks\` is empty). Each task is claimed with a lease: heartbeat within its \`heartbeatTimeoutMs\`, or the call is interrupted and follows its policy (sent again to a worker, or \`outcomeUnknown\`).`,
        tags: ["tasks"],
        body: {
          type: "object",
          properties: {
            tools: { type: "array", minItems: 1, maxItems: MAX_TOOLS, items: toolPattern },
            waitMs: { type: "integer", minimum: 0, maximum: MAX_POLL_MS, description: `Default ${MAX_POLL_MS}.` },
            max: { type: "integer", minimum: 1, maximum: MAX_TASKS_PER_POLL, description: "Default 1." },
            toolset: { ...id, description: "Only calls of runs on this toolset, or on a toolset derived from it (saving a workflow derives one)." },
          },
          required: ["tools"],
          additionalProperties: false,
        },
        response: { 200: { type: "object", properties: { tasks: { type: "array", items: task } } }, ...errors(400, 401, 403) },
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
          waitMs: waitMs ?? MAX_POLL_MS,
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

  app.post<{ Params: { id: string }; Body: HeartbeatRequest }>(
    "/tasks/:id/heartbeat",
    {
      schema: {
        summary: "Keep a task's lease",
        tags: ["tasks"],
        params: taskParams,
        body: { type: "object", properties: { lease }, required: ["lease"], additionalProperties: false },
        response: { 200: leaseAnswer, ...errors(400, 401) },
      },
    },
    async (request): Promise<LeaseAnswer> => {
      context.ensureOpen();
      context.workers.answered(callerOf(request).keyId);
      return { status: await context.hostTasks.heartbeat(callerOf(request).scope, request.params.id, request.body.lease) };
    },
  );

  app.post<{ Params: { id: string }; Body: CompleteTaskRequest }>(
    "/tasks/:id/complete",
    {
      schema: {
        summary: "Answer a task with the tool's result",
        tags: ["tasks"],
        params: taskParams,
        body: { type: "object", properties: { lease, result: anyJson }, required: ["lease"], additionalProperties: false },
        response: { 200: leaseAnswer, ...errors(400, 401, 413) },
      },
    },
    async (request): Promise<LeaseAnswer> => {
      context.ensureOpen();
      context.workers.answered(callerOf(request).keyId);
      return { status: await context.hostTasks.complete(callerOf(request).scope, request.params.id, request.body.lease, request.body.result ?? null) };
    },
  );

  app.post<{ Params: { id: string }; Body: FailTaskRequest }>(
    "/tasks/:id/fail",
    {
      schema: {
        summary: "Answer a task with a failure",
        description:
          "The script gets a `ToolError` with this code and message. A failure is an answer, never retried (a worker that cannot answer lets the lease lapse instead: an interruption).",
        tags: ["tasks"],
        params: taskParams,
        body: {
          type: "object",
          properties: {
            lease,
            error: {
              type: "object",
              properties: {
                code: { type: "string", minLength: 1, maxLength: 200 },
                message: { type: "string", maxLength: 65_536 },
                retryable: { type: "boolean" },
                details: anyJson,
              },
              required: ["code", "message"],
              additionalProperties: false,
            },
          },
          required: ["lease", "error"],
          additionalProperties: false,
        },
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
