import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EngineError } from "./index.js";
import type * as Errors from "./errors.js";

/** A second instance of the errors module, as another copy of the package (two installs, a bundle) would load it. */
async function anotherCopy(): Promise<typeof Errors> {
  return (await import(new URL("./errors.js?another-copy", import.meta.url).href)) as typeof Errors;
}

describe("EngineError", () => {
  it("is recognised by its brand: an error made by another copy of the package is an EngineError", async () => {
    const copy = await anotherCopy();
    assert.notEqual(copy.EngineError, EngineError, "the copy is a class of its own");
    const foreign: unknown = new copy.EngineError("conflict", "made elsewhere");
    assert.ok(EngineError.is(foreign));
    assert.ok(foreign instanceof EngineError);
    assert.equal(foreign.code, "conflict");
  });

  it("is not claimed by look-alikes: an Error with the same name and code, or a plain object", () => {
    const lookalike = Object.assign(new Error("no"), { name: "EngineError", code: "conflict" });
    assert.equal(EngineError.is(lookalike), false);
    assert.equal(lookalike instanceof EngineError, false);
    assert.equal(EngineError.is({ code: "conflict", message: "x" }), false);
    assert.equal(EngineError.is(null), false);
    assert.ok(new EngineError("closed", "x") instanceof Error);
  });
});
