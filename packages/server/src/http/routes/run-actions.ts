import type { FastifyInstance } from "fastify";
import {
  cancelRunRequest,
  forkRunRequest,
  run,
  runIdParams,
  signalRequest,
  signalResult,
  startedRun as startedRunSchema,
  type CancelRunRequest,
  type ForkRunRequest,
  type Run,
  type RunIdParams,
  type SignalRequest,
  type SignalResult,
  type StartedRun,
} from "@tapedeck/protocol/api";
import { mayActAs } from "../../tenancy/end-user-access.js";
import { libraryLimited, mayReachLibraryData } from "../../tenancy/library-access.js";
import { forbidUnless } from "../api-error.js";
import { runView } from "../run-view.js";
import { ttlMs } from "../run-ttl.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { startedRun } from "./started-run.js";
import { visibleRun } from "./visible-run.js";

/** What a caller does to a run it can see: cancel it, signal it, fork it. */
export function runActionRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Params: RunIdParams; Body: CancelRunRequest | undefined }>(
    "/runs/:id/cancel",
    {
      schema: {
        summary: "Cancel a run",
        description: "A run that has not ended is cancelled (calls in flight are abandoned); one that has ended is left as it is. Answers the run.",
        tags: ["runs"],
        params: runIdParams,
        body: cancelRunRequest,
        response: { 200: run, ...errors(400, 401, 404) },
      },
    },
    async (request): Promise<Run> => {
      const engine = context.engine();
      const found = await visibleRun(engine, callerOf(request).scope, request.params.id);
      await engine.cancel(found.id, request.body?.reason);
      return runView(await engine.getRun(found.id));
    },
  );

  app.post<{ Params: RunIdParams; Body: SignalRequest }>(
    "/runs/:id/signal",
    {
      schema: {
        summary: "Send a signal to a run",
        description:
          "The signal is kept until a `signal(name)` call of the run takes it (each once, oldest first); a run parked on it wakes. The same `idempotencyKey` twice delivers once.",
        tags: ["runs"],
        params: runIdParams,
        body: signalRequest,
        response: { 200: signalResult, ...errors(400, 401, 404, 409) },
      },
    },
    async (request): Promise<SignalResult> => {
      const engine = context.engine();
      const found = await visibleRun(engine, callerOf(request).scope, request.params.id);
      const { name, payload, idempotencyKey } = request.body;
      return engine.signal(found.id, name, payload ?? null, idempotencyKey === undefined ? {} : { key: idempotencyKey });
    },
  );

  app.post<{ Params: RunIdParams; Body: ForkRunRequest }>(
    "/runs/:id/fork",
    {
      schema: {
        summary: "Fork a run with corrected code",
        description:
          "A new run on the parent's toolset, with its labels, namespace and ttl: each call matching an unused completed call of the parent (same tool and arguments, in order) takes the recorded result instead of being sent. The parent is unchanged. " +
          "`idempotencyKey` and `ttl` as for `POST /v1/runs` (a key is unique in the parent's namespace, among starts and forks). " +
          "Forking a run of a namespace acts as that end user, as starting one there does: a key limited only by labels is refused (403).",
        tags: ["runs"],
        params: runIdParams,
        body: forkRunRequest,
        response: { 200: startedRunSchema, 201: startedRunSchema, ...errors(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply): Promise<StartedRun> => {
      const engine = context.engine();
      const caller = callerOf(request);
      const scope = caller.scope;
      const parent = await visibleRun(engine, scope, request.params.id);
      forbidUnless(mayActAs(caller, parent.namespace, "forking a run"));
      if (libraryLimited(caller, parent.namespace))
        forbidUnless(mayReachLibraryData(caller, parent.namespace, [(await engine.toolset(parent.toolsetId)).toolset], "forking a run"));
      const { source, input, idempotencyKey: key, ttl, traceparent: trace } = request.body;
      await context.quotas.admitStart(caller, parent.namespace, key);
      const started = await engine.fork({
        parent: parent.id,
        source,
        ...(input === undefined ? {} : { input }),
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(ttl === undefined ? {} : { ttlMs: ttlMs(ttl) }),
        ...(trace === undefined ? {} : { traceparent: trace }),
      });
      return startedRun(engine, started, reply, scope);
    },
  );
}
