import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { harnessToolset, ToolHarness } from "../test-support/tool-harness.js";
import { runScript, testEngine, testSandboxes } from "../test-support/engines.js";

after(() => testSandboxes().close());

describe("derived toolsets (base)", () => {
  it("a derived toolset has its base's tools as pinned plus its own; it has its own stable id; the base is unchanged", async () => {
    const tools = new ToolHarness({ "shop.price": () => 5, "mail.send": () => "sent" });
    const t = await testEngine({ hostTools: tools.module() });
    try {
      const base = await t.engine.registerToolset(harnessToolset(["shop.price"], { policies: { "shop.price": { approval: true } } }));
      const spec = { base: base.id, ...harnessToolset(["mail.send"]), policies: { "mail.send": { timeout: "5s" } } };
      const derived = await t.engine.registerToolset(spec);
      assert.notEqual(derived.id, base.id);
      assert.equal((await t.engine.registerToolset(spec)).id, derived.id, "the same derivation gets the same id");
      assert.equal(derived.toolset.base, base.id);
      assert.deepEqual(
        derived.toolset.tools.map((tool) => [`${tool.group}.${tool.name}`, tool.policy.approval, tool.policy.timeoutMs]),
        [
          ["mail.send", false, 5000],
          ["shop.price", true, undefined],
        ],
        "a host tool has no attempt timeout unless its policy sets one",
      );
      assert.match(derived.declarations.typescript, /shop/);
      assert.deepEqual(
        (await t.engine.toolset(base.id)).toolset.tools.map((tool) => tool.group),
        ["shop"],
      );
      const { end } = await runScript(t.engine, spec, `import { mail } from "tapedeck:tools";\nexport default async () => mail.send({});`);
      assert.deepEqual(end, { status: "completed", output: "sent" });
    } finally {
      await t.cleanup();
    }
  });

  it("a missing base, a group the base has, or a policy for a base tool is refused with what to do", async () => {
    const t = await testEngine();
    try {
      const base = await t.engine.registerToolset(harnessToolset(["shop.price"]));
      await assert.rejects(t.engine.registerToolset({ base: `ts_${"0".repeat(64)}` }), {
        code: "invalid_toolset",
        message: /base: there is no toolset ts_0+; register the base toolset first/,
      });
      await assert.rejects(t.engine.registerToolset({ base: "mine" }), { code: "invalid_toolset", message: /base must be the id of a registered toolset/ });
      await assert.rejects(t.engine.registerToolset({ base: base.id, ...harnessToolset(["shop.other"]) }), {
        code: "invalid_toolset",
        message: /the group "shop" is already in the base toolset/,
      });
      await assert.rejects(t.engine.registerToolset({ base: base.id, policies: { "shop.price": { approval: true } } }), {
        code: "invalid_toolset",
        message: /policies\["shop\.price"\] targets a tool of the base toolset, whose policies stay as they were pinned/,
      });
    } finally {
      await t.cleanup();
    }
  });
});
