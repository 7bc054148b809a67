import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { collect, withCliTest } from "./test-support/child-cli.js";

/**
 * What runs carry (log lines, tool arguments and results, outputs, errors, decision reasons) is
 * written by scripts, tools and servers; printed raw, an escape sequence in it drives the
 * terminal of whoever looks: window title (OSC 0), clipboard (OSC 52), clear-screen, a carriage
 * return that overwrites the line, C1 controls, bidi overrides that reorder what is shown. Every
 * command that prints run data is run in a child process (as in a terminal) and its whole
 * output is checked: no control character but newlines, each shown escaped.
 */
const HOSTILE = String.raw`title \x1b]0;pwned\x07 clip \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J\x1b[H fake\rREAL c1 \u009b31m bidi \u202eevil\u202c del \x7f nul \x00`;

const HOST_MODULE = `
export const term = {
  echo: async (args) => ({ text: "\\x1b]0;from-tool\\x07" + args.text }),
  danger: async () => ({ ok: true }),
};`;

const open = { type: "object" };
const TOOLSET = JSON.stringify({
  hostTools: { term: { echo: { description: "Echoes.", inputSchema: open }, danger: { description: "Needs approval.", inputSchema: open } } },
  policies: { "term.danger": { approval: true } },
});

const SCRIPTS = {
  // Logs, a result, arguments of a call waiting for approval; rejected, it fails with the text.
  parks: `import { term, ToolError } from "tapedeck:tools";
export default async () => {
  const hostile = "${HOSTILE}";
  console.log("log " + hostile);
  const echoed = await term.echo({ text: hostile });
  try {
    await term.danger({ text: hostile });
  } catch (e) {
    throw new Error("failed " + hostile + " " + (e as ToolError).message);
  }
  return echoed;
};`,
  outputs: `export default async () => ({ out: "${HOSTILE}" });`,
};

/** Control characters that must never reach a terminal (newline excepted). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

function assertInert(text: string, where: string): void {
  const found = CONTROL.exec(text);
  assert.equal(
    found,
    null,
    `${where} printed a raw control character U+${found?.[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${found?.index}: ${JSON.stringify(text.slice(Math.max(0, (found?.index ?? 0) - 40), (found?.index ?? 0) + 20))}`,
  );
}

describe("terminal injection", () => {
  it("run, runs, approvals, show, reject and a failed run print control characters escaped", async () => {
    await withCliTest("tapedeck-term-", async ({ dir, spawn }) => {
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      writeFileSync(join(dir, "tools.mjs"), HOST_MODULE);
      for (const [name, source] of Object.entries(SCRIPTS)) writeFileSync(join(dir, `${name}.ts`), source);
      const common = ["--data", join(dir, "data"), "--host", join(dir, "tools.mjs")];
      const readOnly = ["--data", join(dir, "data")];
      const tapedeck = async (args: readonly string[]) => {
        const done = await collect(spawn(args));
        assertInert(done.stdout, `tapedeck ${args[0]} (stdout)`);
        assertInert(done.stderr, `tapedeck ${args[0]} (stderr)`);
        return done;
      };

      const parked = await tapedeck(["run", join(dir, "parks.ts"), "--toolset", join(dir, "toolset.json"), "--detach", ...common]);
      assert.equal(parked.code, 0, parked.stderr);
      const runId = parked.stdout.trim();
      assert.match(runId, /^run_/);
      // Shown, escaped: the log line, and the arguments of the call waiting for approval.
      assert.ok(
        parked.stderr.includes(
          String.raw`[log] log title \x1b]0;pwned\x07 clip \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J\x1b[H fake\rREAL c1 \u009b31m bidi \u202eevil\u202c del \u007f nul \x00`,
        ),
        parked.stderr,
      );
      assert.match(parked.stderr, /approval of #2 term\.danger/);

      const listed = await tapedeck(["runs", ...readOnly]);
      assert.ok(listed.stdout.includes(runId) && listed.stdout.includes(String.raw`bidi \u202eevi`), listed.stdout);
      const pending = await tapedeck(["approvals", ...readOnly]);
      assert.ok(pending.stdout.includes(`${runId}/2`) && pending.stdout.includes(String.raw`c1 \u009b31m`), pending.stdout);

      const shown = await tapedeck(["show", runId, ...readOnly]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.ok(shown.stdout.includes(String.raw`fake\rREAL`), "the log line, one line, its CR shown");
      assert.ok(shown.stdout.includes(String.raw`→ {"text":"\u001b]0;from-tool\u0007title`), shown.stdout);

      const rejected = await tapedeck(["reject", `${runId}/2`, "--reason", "no \x1b[2J thanks \u202e", ...common]);
      assert.equal(rejected.code, 1, "the run fails");
      assert.ok(rejected.stderr.includes(String.raw`failed title \x1b]0;pwned\x07`), rejected.stderr);
      assert.ok(rejected.stderr.includes(String.raw`no \x1b[2J thanks \u202e`), rejected.stderr);
      const failed = await tapedeck(["show", runId, ...readOnly]);
      assert.match(failed.stdout, /status {3}failed/);

      const output = await tapedeck(["run", join(dir, "outputs.ts"), "--toolset", join(dir, "toolset.json"), ...common]);
      assert.equal(output.code, 0, output.stderr);
      // Still JSON, and the same value: JSON.stringify escapes C0 itself; the rest is escaped as \\uXXXX.
      assert.deepEqual(JSON.parse(output.stdout), { out: JSON.parse(`"${HOSTILE.replaceAll("\\x", "\\u00")}"`) as string });
    });
  });
});
