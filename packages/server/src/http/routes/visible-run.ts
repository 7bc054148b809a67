import type { Engine, RunRecord } from "@tapedeck/engine";
import { orRunNotFound, runNotFound } from "../api-error.js";
import { sees, type Scope } from "../../tenancy/scope.js";

/** The run, if it exists and is inside the scope; else the one 404 of a missing run (so a caller cannot tell the two apart). */
export async function visibleRun(engine: Engine, scope: Scope, id: string): Promise<RunRecord> {
  const run = await orRunNotFound(id, engine.getRun(id));
  if (!sees(scope, run)) throw runNotFound(id);
  return run;
}
