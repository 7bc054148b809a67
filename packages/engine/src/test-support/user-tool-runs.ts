import assert from "node:assert/strict";
import type { JournalEntry, JsonValue, RunEnd, ToolsetSpec } from "@tapedeck/protocol";
import type { Engine } from "../engine.js";
import { EngineError } from "../errors.js";

/** What the tests of user tools through the engine read of runs and registrations. */

/** The output of a run that must have completed (else the assertion says how it ended). */
export function output(end: RunEnd): JsonValue {
  assert.equal(end.status, "completed", JSON.stringify(end));
  return (end as { output: JsonValue }).output;
}

/** The `call.sub` entries of a journal, in order. */
export const subCalls = (journal: readonly JournalEntry[]) => journal.filter((e): e is Extract<JournalEntry, { kind: "call.sub" }> => e.kind === "call.sub");

/** The message of the `invalid_toolset` error registering `spec` must fail with. */
export async function registrationError(engine: Engine, spec: ToolsetSpec): Promise<string> {
  try {
    await engine.registerToolset(spec);
  } catch (error) {
    assert.ok(error instanceof EngineError, String(error));
    assert.equal(error.code, "invalid_toolset");
    return error.message;
  }
  assert.fail("the toolset was registered");
}
