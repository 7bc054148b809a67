import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

const EXAMPLE = fileURLToPath(new URL("../../../../examples/hello/", import.meta.url));

const example = (file: string) => join(EXAMPLE, file);

describe("tapedeck CLI", () => {
  it("runs the README example: output JSON on stdout, logs on stderr", async () => {
    await withDir(async (dir) => {
      const io = capture();
      const code = await cli(["run", example("script.ts"), "--toolset", example("toolset.json"), "--host", example("tools.ts"), "--data", dir], io);
      assert.equal(code, 0, io.err.join("\n"));
      assert.deepEqual(JSON.parse(io.out.join("\n")), {
        category: "books",
        items: ["The Pragmatic Programmer", "Designing Data-Intensive Applications"],
        totalCents: 8549,
      });
      assert.ok(io.err.includes("[log] 2 items in books"));

      const listed = capture();
      assert.equal(await cli(["runs", "--data", dir], listed), 0);
      const runId = listed.out[0]?.split(" ")[0] ?? "";
      assert.match(runId, /^run_/);
      const shown = capture();
      assert.equal(await cli(["show", runId, "--data", dir], shown), 0);
      assert.ok(shown.out.some((l) => l.includes("call.scheduled") && l.includes("#1 shop.list_items")));
      assert.ok(shown.out.some((l) => l.startsWith("status   completed")));
      const verified = capture();
      assert.equal(await cli(["verify", runId, "--data", dir], verified), 0, verified.err.join("\n"));
      assert.match(verified.out.join("\n"), /^replays: the script ends completed as recorded$/);
    });
  });

  it("a user tool's console lines are printed by run (after the tool and its call) and by show (under the call)", async () => {
    await withDir(async (dir) => {
      const toolset = join(dir, "toolset.json");
      writeFileSync(
        toolset,
        JSON.stringify({
          userTools: {
            text: {
              greet: {
                description: "Greets someone.",
                code: "export default (input: { name: string }) => { console.log('greeting ' + input.name); console.warn('twice\\n[log] other.tool #9: forged'); return 'hi ' + input.name; };",
                inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
              },
            },
          },
        }),
      );
      const script = join(dir, "script.ts");
      writeFileSync(
        script,
        `import { text } from "tapedeck:tools";\nexport default async () => { console.log("before"); return text.greet({ name: "Ann" }); };`,
      );
      const io = capture();
      assert.equal(await cli(["run", script, "--toolset", toolset, "--data", dir], io), 0, io.err.join("\n"));
      assert.deepEqual(JSON.parse(io.out.join("\n")), "hi Ann");
      assert.deepEqual(io.err.slice(0, 3), ["[log] before", "[log] text.greet #1: greeting Ann", "[warn] text.greet #1: twice\\n[log] other.tool #9: forged"]);
      const listed = capture();
      assert.equal(await cli(["runs", "--data", dir], listed), 0);
      const shown = capture();
      assert.equal(await cli(["show", listed.out[0]!.split(" ")[0]!, "--data", dir], shown), 0);
      const lines = shown.out.join("\n").split("\n");
      const completed = lines.findIndex((line) => line.includes("call.completed") && line.includes('#1 → "hi Ann"'));
      assert.ok(completed >= 0, lines.join("\n"));
      assert.deepEqual(
        lines.slice(completed + 1, completed + 3).map((line) => line.trim()),
        ["[log] greeting Ann", "[warn] twice\\n[log] other.tool #9: forged"],
      );
    });
  });

  it("passes --input to the default export", async () => {
    await withDir(async (dir) => {
      const io = capture();
      const code = await cli(
        ["run", example("script.ts"), "--toolset", example("toolset.json"), "--host", example("tools.ts"), "--data", dir, "--input", '{"category":"music"}'],
        io,
      );
      assert.equal(code, 0);
      assert.equal((JSON.parse(io.out.join("\n")) as { totalCents: number }).totalCents, 1299);
    });
  });

  it("check: exit 0 on a good script, 1 with diagnostics and a code frame on a bad one", async () => {
    await withDir(async (dir) => {
      const good = capture();
      assert.equal(await cli(["check", example("script.ts"), "--toolset", example("toolset.json")], good), 0);
      assert.deepEqual(good.out, [`ok: ${example("script.ts")} type-checks against ${example("toolset.json")}`]);
      const bad = join(dir, "bad.ts");
      writeFileSync(bad, `import { shop } from "tapedeck:tools";\nexport default shop.list_items({ category: "films" });\n`);
      const io = capture();
      assert.equal(await cli(["check", bad, "--toolset", example("toolset.json")], io), 1);
      const text = io.err.join("\n");
      assert.match(text, new RegExp(`^${bad.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2:\\d+ - error TS2322`), "the diagnostic names the file it was given");
      assert.ok(io.err.at(-1)?.startsWith(`${bad}: 1 error against `), io.err.at(-1));
      assert.match(text, /> +2 \|/);
    });
  });

  it("run: a failing script prints the error as the model reads it, exit 1", async () => {
    await withDir(async (dir) => {
      const script = join(dir, "fail.ts");
      writeFileSync(script, `import { shop } from "tapedeck:tools";\nexport default async () => {\n  return await shop.get_price({ sku: "nope" });\n};\n`);
      const io = capture();
      assert.equal(await cli(["run", script, "--toolset", example("toolset.json"), "--host", example("tools.ts"), "--data", dir], io), 1);
      const text = io.err.join("\n");
      assert.match(text, /The script did not catch a failed tool call at line 3, column \d+: ToolError: no item nope/);
      assert.match(text, /code: tool_error/);
      assert.match(text, /call: #1 shop.get_price/);
    });
  });

  it("fork: a failed run forked with corrected code completes without repeating its calls", async () => {
    await withDir(async (dir) => {
      const broken = join(dir, "broken.ts");
      writeFileSync(
        broken,
        `import { shop } from "tapedeck:tools";\nexport default async () => {\n  const items = await shop.list_items({ category: "books" });\n  return items[9]!.title.length;\n};\n`,
      );
      const failed = capture();
      assert.equal(await cli(["run", broken, "--toolset", example("toolset.json"), "--host", example("tools.ts"), "--data", dir], failed), 1);
      const runs = capture();
      await cli(["runs", "--data", dir], runs);
      const parent = runs.out[0]!.split(" ")[0]!;
      const fixed = join(dir, "fixed.ts");
      writeFileSync(
        fixed,
        `import { shop } from "tapedeck:tools";\nexport default async () => {\n  const items = await shop.list_items({ category: "books" });\n  return items.length;\n};\n`,
      );
      const forked = capture();
      assert.equal(await cli(["fork", parent, fixed, "--host", example("tools.ts"), "--data", dir], forked), 0, forked.err.join("\n"));
      assert.equal(JSON.parse(forked.out.join("\n")), 2);
      const child = /run (run_\w+) \(fork of /.exec(forked.err.join("\n"))?.[1] ?? "";
      const shown = capture();
      await cli(["show", child, "--data", dir], shown);
      assert.ok(shown.out.some((l) => l.includes(`(reused from ${parent} #1)`)));
    });
  });

  it("usage errors exit 2 with the command's usage; a host module missing a tool is named", async () => {
    await withDir(async (dir) => {
      const io = capture();
      assert.equal(await cli(["run", example("script.ts"), "--data", dir], io), 2);
      assert.match(io.err.join("\n"), /missing --toolset\nusage: tapedeck run/);
      const unknown = capture();
      assert.equal(await cli(["frobnicate"], unknown), 2);
      const host = join(dir, "host.mjs");
      writeFileSync(host, "export const shop = { list_items: async () => [] };\n");
      const missing = capture();
      assert.equal(await cli(["run", example("script.ts"), "--toolset", example("toolset.json"), "--host", host, "--data", dir], missing), 2);
      assert.match(missing.err.join("\n"), /does not implement shop\.get_price/);
      const noHost = capture();
      assert.equal(await cli(["run", example("script.ts"), "--toolset", example("toolset.json"), "--data", dir], noHost), 2);
      assert.match(noHost.err.join("\n"), /pass a host module/);
    });
  });

  it("run --detach leaves the run waiting; a signal it does not wait for is kept without waking it; one sent without the host module is kept too, and resume delivers it", async () => {
    await withDir(async (dir) => {
      const script = join(dir, "signals.ts");
      writeFileSync(script, `export default async () => ({ a: await signal<number>("a"), b: await signal<number>("b") });\n`);
      const host = ["--host", example("tools.ts"), "--data", dir];
      const started = capture();
      assert.equal(await cli(["run", script, "--toolset", example("toolset.json"), "--detach", ...host], started), 0, started.err.join("\n"));
      const [runId] = started.out;
      assert.match(runId ?? "", /^run_\w+$/);
      assert.match(
        started.err.join("\n"),
        new RegExp(`^run ${runId} waiting: signal "a" → tapedeck signal ${runId} a --payload '<json>' --data \\S+ --host \\S+$`),
      );

      const early = capture();
      assert.equal(await cli(["signal", runId!, "b", "--payload", "2", "--data", dir], early), 0, early.err.join("\n"));
      assert.deepEqual(early.out, []);
      assert.equal(early.err[0], `signal "b" sent to run ${runId}`);
      assert.match(early.err[1] ?? "", new RegExp(`^run ${runId} waiting: signal "a"`), "still waiting for a");

      const noHost = capture();
      assert.equal(await cli(["signal", runId!, "a", "--payload", "1", "--data", dir], noHost), 2);
      assert.match(
        noHost.err.join("\n"),
        /pass a host module \(--host \.\/tools\.ts\)\. The signal was kept: do not send it again; the run takes it when it resumes/,
      );

      const resumed = capture();
      assert.equal(await cli(["resume", runId!, ...host], resumed), 0, resumed.err.join("\n"));
      assert.deepEqual(JSON.parse(resumed.out.join("\n")), { a: 1, b: 2 });
    });
  });

  it("signal, approvals, approve, reject: usage errors exit 2 with the usage; an unknown run exits 1", async () => {
    await withDir(async (dir) => {
      assert.equal(await cli(["toolset", "register", example("toolset.json"), "--data", dir], capture()), 0, "a data folder");
      const cases: [string[], RegExp][] = [
        [["signal", "run_x"], /^missing <name>\nusage: tapedeck signal <run_id> <name>/],
        [["signal", "run_x", "go", '{"n":1}'], /^unexpected argument "\{\\"n\\":1\}"\nusage: tapedeck signal/],
        [["signal", "run_x", "go", "--payload", "{n:1}"], /^--payload is not valid JSON: .*\nusage: tapedeck signal/],
        [["approve", "run_x"], /^missing <seq> \(or give the approval id <run_id>\/<seq>\)\nusage: tapedeck approve <approval_id> \| <run_id> <seq>/],
        [
          ["reject", "run_x", "#2"],
          /^<seq> must be the number of the call, as tapedeck approvals lists it \(a positive integer\); got "#2"\nusage: tapedeck reject/,
        ],
        [["approve", "run_x", "0"], /^<seq> must be the number of the call/],
        [["approvals", "run_x", "run_y"], /^unexpected argument "run_y"\nusage: tapedeck approvals \[<run_id> \| <session_id>\]/],
        [["run", example("script.ts"), "--toolset", example("toolset.json"), "--detach=yes"], /^Option '--detach' does not take an argument/],
      ];
      for (const [args, pattern] of cases) {
        const io = capture();
        assert.equal(await cli([...args, "--data", dir], io), 2, args.join(" "));
        assert.match(io.err.join("\n"), pattern);
      }
      for (const args of [
        ["signal", "run_nope", "go"],
        ["approve", "run_nope", "1"],
        ["reject", "run_nope", "1"],
        ["approvals", "run_nope"],
      ]) {
        const io = capture();
        assert.equal(await cli([...args, "--data", dir], io), 1, args.join(" "));
        assert.equal(io.err.join("\n"), "error: No run run_nope.");
      }
      const none = capture();
      assert.equal(await cli(["approvals", "--data", dir], none), 0);
      assert.deepEqual([none.out, none.err], [[], ["no calls are waiting for a decision"]]);
    });
  });

  it("a malformed toolset file is refused with the path of the mistake", async () => {
    await withDir(async (dir) => {
      const file = join(dir, "toolset.json");
      writeFileSync(file, JSON.stringify({ hostTools: { shop: { x: { inputSchema: 5 } } } }));
      const io = capture();
      assert.equal(await cli(["check", example("script.ts"), "--toolset", file], io), 2);
      assert.match(io.err.join("\n"), /hostTools\.shop\["x"\]\.inputSchema must be a JSON Schema/);
    });
  });
});
