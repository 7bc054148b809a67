import type { Engine, StartResult } from "@tapedeck/engine";
import type { StartedRun } from "@tapedeck/sdk";
import { ApiError } from "../api-error.js";
import { runView } from "../run-view.js";

/** The answer to a start or a fork: the new run, or the type-checker's refusal as a 422. */
export async function startedRun(engine: Engine, started: StartResult): Promise<StartedRun> {
  if (started.kind === "refused") {
    const errors = started.diagnostics.filter((d) => d.category === "error").length;
    throw new ApiError("script_refused", `The script did not type-check (${errors} error${errors === 1 ? "" : "s"}); no run was created. Fix it and start it again.`, { diagnostics: started.diagnostics });
  }
  return { run: runView(await engine.getRun(started.runId)), warnings: started.warnings };
}
