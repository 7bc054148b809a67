import type { FastifyInstance } from "fastify";
import { testReport, testRequest, type TestReport, type TestRequest } from "@tapedeck/protocol/api";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { reachableToolset } from "../../tenancy/toolset-access.js";
import { callerOf } from "./request-caller.js";
import { scriptRefused } from "./started-run.js";
import { visibleRun } from "./visible-run.js";

/** `test_script` over the API: `Engine.test`, with a scenario's `from_run` held to the caller's scope. */
export function testRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: TestRequest }>(
    "/test",
    {
      schema: {
        summary: "Test a script against mocks, in virtual time",
        description:
          "Runs the script against a scenario (mocked results, signals and decisions at virtual times) or a cassette, on an engine of its own: nothing is sent to a tool, no run is kept, and sleeps take no real time. " +
          "`scenario.from_run` answers calls from what that run recorded (a run outside the caller's scope is 404, as a missing one). " +
          "A script that does not type-check is refused (422 `script_refused`, with diagnostics), as by `POST /v1/runs`.",
        tags: ["scripts"],
        body: testRequest,
        response: { 200: testReport, ...errors(400, 401, 404, 422) },
      },
    },
    async (request): Promise<TestReport> => {
      const engine = context.engine();
      const { toolset, source, input, scenario } = request.body;
      const fromRun = scenario?.from_run;
      await reachableToolset(context.store, callerOf(request), toolset);
      if (typeof fromRun === "string") await visibleRun(engine, callerOf(request).scope, fromRun);
      const result = await engine.test({ toolset, source, ...(input === undefined ? {} : { input }), ...(scenario === undefined ? {} : { scenario }) });
      if (result.kind === "refused") throw scriptRefused(result.diagnostics, "nothing was run. Fix it and test it again.");
      // The test run's id names a run of a store thrown away with the test: not shown.
      const { kind: _kind, runId: _runId, ...report } = result;
      return report;
    },
  );
}
