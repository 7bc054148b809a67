import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

/**
 * `tapedeck schedules …` in process on a data folder: create (a toolset file registered first),
 * refusals naming each problem in flags' words, list with filters, show with the next fires in
 * the schedule's zone, pause, resume, trigger (the run follows here), delete, and --help.
 */
const EXAMPLE = fileURLToPath(new URL("../../../../examples/hello/", import.meta.url));
const example = (file: string): string => join(EXAMPLE, file);

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const io = capture();
  const code = await cli(args, io);
  return { code, out: io.out, err: io.err };
}

describe("tapedeck schedules", () => {
  it("--help says every subcommand and flag", async () => {
    const help = await run(["schedules", "--help"]);
    assert.equal(help.code, 0);
    const text = help.out.join("\n");
    for (const part of ["schedules create", "--cron", "--every", "--timezone", "--overlap", "--catchup", "list", "show|pause|resume|delete", "trigger"])
      assert.ok(text.includes(part), `${part} in ${text}`);
  });

  it("creates, lists, shows, pauses, resumes, triggers and deletes a schedule on the data folder", async () => {
    await withDir(async (dir) => {
      const created = await run([
        "schedules",
        "create",
        "--toolset",
        example("toolset.json"),
        "--script",
        example("script.ts"),
        "--input",
        '{"category":"games"}',
        "--cron",
        "0 9 * * 1-5",
        "--timezone",
        "Europe/Berlin",
        "--label",
        "team=red",
        "--note",
        "weekday mornings",
        "--data",
        dir,
      ]);
      assert.equal(created.code, 0, created.err.join("\n"));
      const id = created.out[0]!;
      assert.match(id, /^sch_/);
      const nextLines = created.err.filter((line) => /\(\d{4}-\d\d-\d\d 09:00:00 Europe\/Berlin\)/.test(line));
      assert.equal(nextLines.length, 5, created.err.join("\n"));

      const refused = await run([
        "schedules",
        "create",
        "--toolset",
        example("toolset.json"),
        "--script",
        example("script.ts"),
        "--every",
        "500ms",
        "--timezone",
        "Nowhere/Land",
        "--overlap",
        "sometimes",
        "--data",
        dir,
      ]);
      assert.equal(refused.code, 1);
      const said = refused.err.join("\n");
      for (const part of [
        "--every must be a whole number of milliseconds, at least 1000",
        '--timezone "Nowhere/Land" is not an IANA time zone',
        "--overlap must be one of",
      ])
        assert.ok(said.includes(part), `${part} in ${said}`);

      const listed = await run(["schedules", "list", "--data", dir]);
      assert.equal(listed.code, 0);
      assert.equal(listed.out.length, 1, "the refused schedule was not saved");
      assert.ok(listed.out[0]!.startsWith(id) && listed.out[0]!.includes('cron "0 9 * * 1-5" Europe/Berlin'));
      assert.equal((await run(["schedules", "list", "--label", "team=red", "--data", dir])).out.length, 1);
      const none = await run(["schedules", "list", "--label", "team=blue", "--data", dir]);
      assert.deepEqual([none.out, none.err], [[], ["no schedules"]]);

      const paused = await run(["schedules", "pause", id, "--data", dir]);
      assert.ok(paused.out[0]!.endsWith("(paused)"));
      assert.ok(paused.out.some((line) => line.includes("none while paused")));
      const resumed = await run(["schedules", "resume", id, "--data", dir]);
      assert.ok(!resumed.out[0]!.includes("paused"));

      const triggered = await run(["schedules", "trigger", id, "--host", example("tools.ts"), "--data", dir]);
      assert.equal(triggered.code, 0, triggered.err.join("\n"));
      const runId = triggered.out[0]!;
      assert.match(runId, /^run_/);
      assert.ok(
        triggered.out.some((line) => line.includes('"category": "games"')),
        triggered.out.join("\n"),
      );
      const shown = await run(["schedules", "show", id, "--data", dir]);
      assert.ok(
        shown.out.some((line) => line.includes("trigger") && line.includes(`started ${runId}`)),
        shown.out.join("\n"),
      );
      assert.ok(shown.out.some((line) => line.includes("labels:    team=red")));

      assert.equal((await run(["schedules", "delete", id, "--data", dir])).code, 0);
      const gone = await run(["schedules", "show", id, "--data", dir]);
      assert.equal(gone.code, 1);
      assert.ok(gone.err.join("\n").includes(`No schedule ${id}`));
      assert.equal((await run(["schedules", "frobnicate", "--data", dir])).code, 2);
    });
  });
});
