import assert from "node:assert/strict";
import { TapedeckError } from "@tapedeck/sdk";

/** The `TapedeckError` a client call fails with; fails the test if the call succeeds or throws anything else. */
export async function failure(call: Promise<unknown>): Promise<TapedeckError> {
  try {
    await call;
  } catch (error) {
    assert.ok(TapedeckError.is(error), String(error));
    return error;
  }
  return assert.fail("expected the call to fail");
}
