import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { modelNameTable } from "./model-name-table.js";

const RESERVED = ["tool_find", "fetch_blob"];

describe("model names of direct tools", () => {
  it("keep group_name when the APIs accept it, rewrite the rest with one warning each, and map back", () => {
    const table = modelNameTable(
      [
        { group: "github", name: "list_issues" },
        { group: "fs", name: "read.file" },
        { group: "a_b", name: "c" },
        { group: "a", name: "b_c" },
        { group: "tool", name: "find" },
        { group: "g", name: "x".repeat(70) },
      ],
      RESERVED,
    );
    assert.equal(table.byPath.get("github.list_issues"), "github_list_issues");
    const rewritten = table.byPath.get("fs.read.file")!;
    assert.match(rewritten, /^fs_read_file_[0-9a-f]{8}$/);
    assert.equal(table.byModelName.get(rewritten), "fs.read.file");
    assert.notEqual(table.byPath.get("tool.find"), "tool_find", "direct mode's own tool keeps its name");
    assert.equal(table.warnings.length, 4, table.warnings.join("\n"));
    const warning = (path: string) => table.warnings.find((w) => w.startsWith(`Tool ${JSON.stringify(path)}`)) ?? "";
    assert.match(warning("fs.read.file"), /has characters model APIs do not accept .* the server still gets "read\.file"/);
    assert.match(warning("tool.find"), /one of direct mode's own tools/);
    assert.match(warning(`g.${"x".repeat(70)}`), /longer than the 64 characters/);
    assert.match(
      table.warnings.find((w) => w.includes("another tool would also be"))!,
      /"a_b_c"/,
    );
  });

  it("give every tool a valid, unique, non-reserved name that maps back to it, warning exactly for the rewrites (property)", () => {
    const long = fc.integer({ min: 55, max: 80 }).map((n) => "y".repeat(n));
    const part = fc.oneof(fc.constantFrom("find", "blob", "x", "a_b", "tool", "fetch"), long, fc.string({ minLength: 1, maxLength: 70 }));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ group: fc.constantFrom("tool", "fetch", "a", "a_b", "g"), name: part }), {
          selector: (t) => `${t.group}.${t.name}`,
          maxLength: 40,
        }),
        (tools) => {
          const table = modelNameTable(tools, RESERVED);
          assert.equal(table.byPath.size, tools.length);
          assert.equal(table.byModelName.size, tools.length, "no two tools share a model name");
          let rewrites = 0;
          for (const tool of tools) {
            const path = `${tool.group}.${tool.name}`;
            const name = table.byPath.get(path)!;
            assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
            assert.ok(!RESERVED.includes(name));
            assert.equal(table.byModelName.get(name), path);
            if (name !== `${tool.group}_${tool.name}`) {
              rewrites++;
              assert.equal(table.warnings.filter((w) => w.startsWith(`Tool ${JSON.stringify(path)} is called ${JSON.stringify(name)}`)).length, 1);
            }
          }
          assert.equal(table.warnings.length, rewrites);
        },
      ),
      { numRuns: 300 },
    );
  });
});
