import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { modelFacingNames } from "./model-names.js";

describe("model-facing tool names", () => {
  it("keeps valid names and rewrites the others to the API's alphabet", () => {
    const names = modelFacingNames([
      { group: "github", name: "list_issues" },
      { group: "fs", name: "read.file" },
      { group: "x", name: "ünïcode tool" },
    ]);
    assert.equal(names.get("github.list_issues"), "github_list_issues");
    assert.match(names.get("fs.read.file")!, /^fs_read_file_[0-9a-f]{8}$/);
    assert.match(names.get("x.ünïcode tool")!, /^x__n_code_tool_[0-9a-f]{8}$/);
  });

  it("never gives two tools the same name, and every name is valid (property)", () => {
    const part = fc.string({ minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ group: fc.constantFrom("a", "a_b", "g"), name: part }), { selector: (t) => `${t.group}.${t.name}`, maxLength: 40 }),
        (tools) => {
          const names = modelFacingNames(tools);
          const values = [...names.values()];
          assert.equal(new Set(values).size, tools.length);
          for (const name of values) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a rewritten name cannot take the spelling of a tool that is already valid", () => {
    const names = modelFacingNames([
      { group: "a", name: "b.c" },
      { group: "a", name: "b_c" },
    ]);
    assert.equal(names.get("a.b_c"), "a_b_c");
    assert.notEqual(names.get("a.b.c"), "a_b_c");
  });

  it("a name of valid characters longer than 64 is cut, with a hash that keeps two such names apart", () => {
    const long = "x".repeat(70);
    const names = modelFacingNames([
      { group: "g", name: long },
      { group: "g", name: `${long}y` },
    ]);
    const [a, b] = [names.get(`g.${long}`)!, names.get(`g.${long}y`)!];
    for (const name of [a, b]) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
    assert.notEqual(a, b);
  });
});
