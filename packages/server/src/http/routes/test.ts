import type { FastifyInstance } from "fastify";
import type { TestReport, TestRequest } from "@tapedeck/sdk";
import { anyJson, errors, id } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";
import { scriptRefused } from "./started-run.js";
import { visibleRun } from "./visible-run.js";

const testReport = {
  type: "object",
  description: "What the test run did. Times are virtual ms since the test started.",
  properties: {
    status: { type: "string", enum: ["completed", "failed", "cancelled", "waiting"] },
    output: anyJson,
    error: { type: "object" },
    waits: { type: "array", items: { type: "object" }, description: "When `waiting`: what nothing in the scenario brings." },
    calls: {
      type: "array",
      items: { type: "object" },
      description: "Every call: tool, args, virtual times, where its answer came from (`answeredBy`), its result or error.",
    },
    logs: { type: "array", items: { type: "object" } },
    virtualMs: { type: "integer" },
  },
} as const;

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
        body: {
          type: "object",
          properties: {
            toolset: id,
            source: { type: "string" },
            input: anyJson,
            scenario: {
              type: "object",
              description: "A scenario document (see the README) or a cassette.",
              properties: { from_run: { ...id, description: "A run (in the caller's scope) whose recorded calls answer first." } },
            },
          },
          required: ["toolset", "source"],
          additionalProperties: false,
        },
        response: { 200: testReport, ...errors(400, 401, 404, 422) },
      },
    },
    async (request): Promise<TestReport> => {
      const engine = context.engine();
      const { toolset, source, input, scenario } = request.body;
      const fromRun = scenario?.from_run;
      if (typeof fromRun === "string") await visibleRun(engine, callerOf(request).scope, fromRun);
      const result = await engine.test({ toolset, source, ...(input === undefined ? {} : { input }), ...(scenario === undefined ? {} : { scenario }) });
      if (result.kind === "refused") throw scriptRefused(result.diagnostics, "nothing was run. Fix it and test it again.");
      // The test run's id names a run of a store thrown away with the test: not shown.
      const { kind: _kind, runId: _runId, ...report } = result;
      return report;
    },
  );
}
