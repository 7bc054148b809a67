import type { Engine, StartResult } from "@tapedeck/engine";
import type { Diagnostic, StartedRun } from "@tapedeck/protocol/api";
import type { FastifyReply } from "fastify";
import { ApiError } from "../api-error.js";
import { sees, type Scope } from "../../tenancy/scope.js";
import { runView } from "../run-view.js";

/**
 * The answer to a start or a fork: 201 with the new run; 200 with the run an idempotency key
 * named already (`existing`), when the caller may see it (else 409: the key is taken); or the
 * type-checker's refusal as a 422.
 */
export async function startedRun(engine: Engine, started: StartResult, reply: FastifyReply, scope: Scope): Promise<StartedRun> {
  if (started.kind === "refused") throw scriptRefused(started.diagnostics, "no run was created. Fix it and start it again.");
  const run = await engine.getRun(started.runId);
  if (started.existing && !sees(scope, run)) {
    // Said without naming the run: a key cannot be used to find another tenant's runs.
    throw new ApiError("conflict", "This idempotencyKey was used to start a run outside what this key or token may see; nothing was started. Use another key.");
  }
  void reply.code(started.existing ? 200 : 201);
  if (!started.existing)
    reply.log.info(
      {
        runId: run.id,
        toolset: run.toolsetId,
        ...(run.namespace === undefined ? {} : { namespace: run.namespace }),
        ...(run.parentId === undefined ? {} : { parent: run.parentId }),
      },
      "run started",
    );
  return { run: runView(run), warnings: started.warnings, existing: started.existing };
}

/** The 422 of a script that did not type-check; `consequence` says what was not done and what to do. */
export function scriptRefused(diagnostics: readonly Diagnostic[], consequence: string): ApiError {
  const errors = diagnostics.filter((d) => d.category === "error").length;
  return new ApiError("script_refused", `The script did not type-check (${errors} error${errors === 1 ? "" : "s"}); ${consequence}`, { diagnostics });
}
