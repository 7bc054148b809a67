import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { harnessToolset, ToolHarness } from "./test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";

after(() => testSandboxes().close());

describe("observed result types", () => {
  it("a tool without an output schema gets its recorded results' shape in the declarations, kept across restarts", async () => {
    const tools = new ToolHarness({ "kv.get": (a: { k: string }) => ({ value: a.k.length, secret: `value-of-${a.k}` }) });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const spec = harnessToolset(["kv.get"]);
      const before = await t.engine.registerToolset(spec);
      assert.match(before.declarations.typescript, /get\(args\?: \{ \[key: string\]: unknown \}\): Promise<unknown>;/);
      await runScript(t.engine, spec, `import { kv } from "tapedeck:tools";\nexport default async () => kv.get({ k: "abc" });`);

      const after = await t.engine.toolset(before.id);
      assert.equal(after.id, before.id, "observing does not change the toolset");
      assert.match(after.declarations.typescript, /@observed/);
      assert.match(after.declarations.typescript, /Promise<\{ secret: string; value: number \}>/);
      assert.match(after.declarations.prompt, /kv\.get\(.*\) → \{ secret: string, value: number \} \(observed\)/);
      assert.doesNotMatch(after.declarations.typescript, /value-of-abc/, "values are never recorded");

      const check = await t.engine.check(
        `import { kv } from "tapedeck:tools";\nexport default async () => (await kv.get({ k: "x" })).value.toUpperCase();`,
        before.id,
      );
      assert.equal(check.ok, false, "scripts are now checked against the observed type");

      const reopened = await t.reopen({ hostTools: tools.module() });
      try {
        assert.match((await reopened.toolset(before.id)).declarations.typescript, /Promise<\{ secret: string; value: number \}>/);
      } finally {
        await reopened.close();
      }
    } finally {
      await t.cleanup();
    }
  });

  it("a result keyed by data (emails, ids) is declared as a Record: no one's data becomes a property name everyone reads", async () => {
    const tools = new ToolHarness({
      "crm.visits": (a: { day: string }) => ({
        day: a.day,
        "alice@example.com": { visits: 3 },
        "bob@example.org": { visits: 1 },
        "4f1c2a9e8b7d6c5f4a3b2c1d0e9f8a7b6c5d4e3f": { visits: 7 },
      }),
    });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const spec = harnessToolset(["crm.visits"]);
      const { id } = await t.engine.registerToolset(spec);
      await runScript(t.engine, spec, `import { crm } from "tapedeck:tools";\nexport default async () => crm.visits({ day: "2025-01-01" });`);
      await runScript(t.engine, spec, `import { crm } from "tapedeck:tools";\nexport default async () => crm.visits({ day: "2025-01-02" });`);
      const { declarations } = await t.engine.toolset(id);
      for (const text of [declarations.typescript, declarations.prompt]) {
        for (const key of ["alice@example.com", "bob@example.org", "4f1c2a9e8b7d"]) assert.ok(!text.includes(key), `${key} is in the declarations:\n${text}`);
      }
      assert.match(declarations.prompt, /crm\.visits\(.*\) → \{ day: string, \[key: string\]: \{ visits: number \} \| string \} \(observed\)/);
      const check = await t.engine.check(
        `import { crm } from "tapedeck:tools";\nexport default async () => { const r = await crm.visits({ day: "x" }); return r["carol@example.net"]; };`,
        id,
      );
      assert.equal(check.ok, true, "any key may be read from a record");
    } finally {
      await t.cleanup();
    }
  });
});
