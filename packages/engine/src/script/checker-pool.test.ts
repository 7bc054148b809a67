import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JsonSchema, ToolsetSpec } from "@tapedeck/protocol";
import { testEngine, testSandboxes } from "../test-support/engines.js";
import { CheckerPool, CheckTimeoutError } from "./checker-pool.js";
import { MAX_SCRIPT_BYTES } from "./script-size.js";

after(() => testSandboxes().close());

/** A valid script of about `bytes` bytes: many typed statements, slow to check. */
function largeScript(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `  const v${i}: { a: number; b: string[] } = { a: ${i}, b: ["x${i}", String((await t.echo({ n: ${i} })).n)] };\n`;
    lines.push(line);
    size += line.length;
  }
  return `import { t } from "tapedeck:tools";\nexport default async () => {\n${lines.join("")}  return 1;\n};\n`;
}

const NUMBER: JsonSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
const TOOLSET: ToolsetSpec = { hostTools: { t: { echo: { description: "Echo.", inputSchema: NUMBER, outputSchema: NUMBER } } } };
const HOST_TOOLS = { t: { echo: (args: unknown) => Promise.resolve(args) } };

const DECLARATIONS = { id: "d", text: `declare module "tapedeck:tools" { export const t: { echo(args: { n: number }): Promise<{ n: number }> }; }` };

describe("script checks", () => {
  it("run off the engine's event loop: a timer set after a large check began fires before the check ends", async () => {
    const t = await testEngine({ hostTools: HOST_TOOLS });
    try {
      const { id } = await t.engine.registerToolset(TOOLSET);
      const order: string[] = [];
      const checked = t.engine.check(largeScript(MAX_SCRIPT_BYTES - 4096), id).then((result) => {
        order.push("checked");
        return result;
      });
      await new Promise<void>((resolve) => setTimeout(resolve, 1));
      order.push("timer");
      const result = await checked;
      assert.ok(result.ok, JSON.stringify(result.diagnostics.slice(0, 3)));
      assert.deepEqual(order, ["timer", "checked"]);
    } finally {
      await t.cleanup();
    }
  });

  it("refuse a script past the size limit, unchecked, with a diagnostic that says what to do", async () => {
    const t = await testEngine({ hostTools: HOST_TOOLS });
    try {
      const { id } = await t.engine.registerToolset(TOOLSET);
      const source = `export default () => ${JSON.stringify("x".repeat(MAX_SCRIPT_BYTES))};`;
      const checked = await t.engine.check(source, id);
      assert.equal(checked.ok, false);
      assert.equal(checked.diagnostics.length, 1);
      assert.equal(checked.diagnostics[0]?.code, "script-too-large");
      assert.match(checked.diagnostics[0]?.message ?? "", /^The script is 257 KiB; a script may be at most 256 KiB of source\. .*pass data in the run's input/);
      const started = await t.engine.start({ toolset: id, source });
      assert.equal(started.kind, "refused");
    } finally {
      await t.cleanup();
    }
  });

  it("stop a check that takes too long, and go on with a fresh worker", async () => {
    const pool = new CheckerPool({ size: 1, timeoutMs: 50 });
    try {
      await assert.rejects(pool.check(largeScript(200_000), DECLARATIONS), CheckTimeoutError);
      const patient = new CheckerPool({ size: 1 });
      try {
        assert.equal((await patient.check(`import { t } from "tapedeck:tools";\nexport default () => t.echo({ n: 1 });`, DECLARATIONS)).ok, true);
      } finally {
        await patient.close();
      }
    } finally {
      await pool.close();
    }
  });
});
