import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

const EXAMPLE = fileURLToPath(new URL("../../../../examples/hello/", import.meta.url));
const example = (file: string) => join(EXAMPLE, file);

describe("tapedeck test and cassette", () => {
  it("a run exported with `cassette` replays under `test` without its host module, to the same output", async () => {
    await withDir(async (dir) => {
      const run = capture();
      assert.equal(
        await cli(["run", example("script.ts"), "--toolset", example("toolset.json"), "--host", example("tools.ts"), "--data", dir], run),
        0,
        run.err.join("\n"),
      );
      const listed = capture();
      await cli(["runs", "--data", dir], listed);
      const runId = listed.out[0]!.split(" ")[0]!;
      const cassettePath = join(dir, "cassette.json");
      const exported = capture();
      assert.equal(await cli(["cassette", runId, "--out", cassettePath, "--data", dir], exported), 0, exported.err.join("\n"));
      const cassette = JSON.parse(readFileSync(cassettePath, "utf8")) as { recorded: { tool: string }[] };
      assert.deepEqual(
        cassette.recorded.map((r) => r.tool),
        ["shop.list_items", "shop.get_price", "shop.get_price"],
      );

      const tested = capture();
      const code = await cli(["test", example("script.ts"), "--toolset", example("toolset.json"), "--scenario", cassettePath, "--data", dir], tested);
      assert.equal(code, 0, tested.err.join("\n"));
      assert.deepEqual(JSON.parse(tested.out.join("\n")), JSON.parse(run.out.join("\n")));
      assert.equal(tested.err.filter((l) => / shop\.\w+\(.*\) recorded → /.test(l)).length, 3);
      assert.ok(tested.err.some((l) => l.startsWith("virtual duration: ")));
    });
  });

  it("mocks from a scenario file, --json for the whole report; a missing mock fails the test with exit 1", async () => {
    await withDir(async (dir) => {
      const scenario = join(dir, "scenario.json");
      writeFileSync(
        scenario,
        JSON.stringify({
          tools: { "shop.list_items": { result: [{ sku: "a", title: "A" }] }, "shop.get_price": { result: { sku: "a", cents: 5 }, delay: "3s" } },
        }),
      );
      const io = capture();
      assert.equal(
        await cli(["test", example("script.ts"), "--toolset", example("toolset.json"), "--scenario", scenario, "--json", "--data", dir], io),
        0,
        io.err.join("\n"),
      );
      const report = JSON.parse(io.out.join("\n")) as { status: string; output: unknown; virtualMs: number; calls: { answeredBy: string }[] };
      assert.deepEqual([report.status, report.output, report.virtualMs], ["completed", { category: "books", items: ["A"], totalCents: 5 }, 3000]);

      writeFileSync(scenario, JSON.stringify({ tools: { "shop.list_items": { result: [{ sku: "a", title: "A" }] } } }));
      const missing = capture();
      assert.equal(await cli(["test", example("script.ts"), "--toolset", example("toolset.json"), "--scenario", scenario, "--data", dir], missing), 1);
      assert.match(missing.err.join("\n"), /no_mock: The test scenario has no mock for shop\.get_price/);

      writeFileSync(scenario, JSON.stringify({ tool: {} }));
      const invalid = capture();
      assert.equal(await cli(["test", example("script.ts"), "--toolset", example("toolset.json"), "--scenario", scenario, "--data", dir], invalid), 2);
      assert.match(invalid.err.join("\n"), /The test scenario is invalid: the scenario has an unknown key "tool"/);
    });
  });
});
