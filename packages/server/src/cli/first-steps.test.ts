import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_NAMES, cli } from "./cli.js";
import { collect, withCliTest } from "./test-support/child-cli.js";
import { capture, withDir } from "./test-support/in-process.js";
import { startServeChild } from "../http/test-support/serve-child.js";

/**
 * What a newcomer hits first with the CLI: every command explains itself (`--help`), the data
 * folder can be set once (`TAPEDECK_DATA`), a mistyped folder is an error that names it rather
 * than a new empty folder, `run` says which run it made and how to fix it, `check` names the
 * file, `credentials set` refuses a toolset the folder does not have and says when a credential
 * would never be sent, and the server's hints name its data folder.
 */

const SCRIPT_OK = `export default async () => ({ ok: true });`;
const SCRIPT_FAILS = `export default async () => {\n  throw new Error("boom");\n};`;
const TOOLSET = JSON.stringify({ http: { allow: ["api.example.com"] } });

/** `tapedeck <args>` in this process, with `env` set for the call. */
async function tapedeck(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = Object.keys(env).map((key) => [key, process.env[key]] as const);
  Object.assign(process.env, env);
  try {
    const io = capture();
    const code = await cli(args, io);
    return { code, stdout: io.out.join("\n"), stderr: io.err.join("\n") };
  } finally {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

describe("first steps with the CLI", () => {
  it("every subcommand answers --help with what it does and its usage (exit 0), touching no data folder", async () => {
    await withDir(async (dir) => {
      const data = join(dir, "never");
      assert.ok(COMMAND_NAMES.length >= 18, COMMAND_NAMES.join(", "));
      for (const name of COMMAND_NAMES) {
        for (const flag of ["--help", "-h"]) {
          const answered = await tapedeck([name, flag], { TAPEDECK_DATA: data });
          assert.equal(answered.code, 0, `tapedeck ${name} ${flag}: ${answered.stderr}`);
          assert.match(answered.stdout, new RegExp(`^tapedeck ${name}: \\S.*\\n\\nusage: tapedeck ${name}\\b`), `tapedeck ${name} ${flag}`);
          assert.match(answered.stdout, /TAPEDECK_DATA/);
        }
        assert.equal((await tapedeck(["help", name])).code, 0);
      }
      // After other arguments too, but not as a flag's value.
      assert.equal((await tapedeck(["run", "script.ts", "--detach", "--help"])).code, 0);
      const reason = await tapedeck(["cancel", "run_x", "--reason", "-h", "--data", data]);
      assert.deepEqual([reason.code === 0, reason.stdout], [false, ""], "the value of --reason, not a request for help");
      assert.ok(!existsSync(data), "no data folder was created");
    });
  });

  it("--help in a child process: the installed command, exit 0", async () => {
    await withCliTest("tapedeck-help-", async ({ dir, spawn }) => {
      const done = await collect(spawn(["serve", "--help"], { TAPEDECK_DATA: join(dir, "data") }));
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, /^tapedeck serve: Runs the HTTP server/);
      assert.ok(!existsSync(join(dir, "data")));
    });
  });

  it("TAPEDECK_DATA sets the data folder of every command; --data wins over it", async () => {
    await withDir(async (dir) => {
      writeFileSync(join(dir, "ok.ts"), SCRIPT_OK);
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      const env = { TAPEDECK_DATA: join(dir, "from-env") };
      const ran = await tapedeck(["run", join(dir, "ok.ts"), "--toolset", join(dir, "toolset.json")], env);
      assert.equal(ran.code, 0, ran.stderr);
      assert.ok(existsSync(join(dir, "from-env", "tapedeck.db")), "the run went to TAPEDECK_DATA");
      const runId = /^run (run_\S+) completed/m.exec(ran.stderr)?.[1];
      assert.ok(runId, ran.stderr);
      assert.match((await tapedeck(["runs"], env)).stdout, new RegExp(`^${runId}\\s+completed`));
      assert.equal((await tapedeck(["show", runId], env)).code, 0);
      const elsewhere = await tapedeck(["runs", "--data", join(dir, "other")], env);
      assert.equal(elsewhere.code, 1, "--data names another folder, which does not exist");
      assert.match(elsewhere.stderr, /other/);
    });
  });

  it("commands that work on a data folder's contents refuse an unknown folder, naming it, and create nothing", async () => {
    await withDir(async (dir) => {
      const data = join(dir, "typo");
      writeFileSync(join(dir, "ok.ts"), SCRIPT_OK);
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      writeFileSync(join(dir, "scenario.json"), JSON.stringify({ from_run: "run_x" }));
      const commands: string[][] = [
        ["runs"],
        ["show", "run_x"],
        ["cassette", "run_x"],
        ["keys", "create"],
        ["approvals"],
        ["verify", "run_x"],
        ["cancel", "run_x"],
        ["resume"],
        ["signal", "run_x", "go"],
        ["approve", "run_x/1"],
        ["reject", "run_x/1"],
        ["fork", "run_x", join(dir, "ok.ts")],
        ["credentials", "list"],
        ["credentials", "set", "API", "--kind", "bearer", "--host", "api.example.com", "--toolset", "ts_x", "--from-env", "HOME"],
        ["test", join(dir, "ok.ts"), "--toolset", join(dir, "toolset.json"), "--scenario", join(dir, "scenario.json")],
      ];
      for (const args of commands) {
        const refused = await tapedeck([...args, "--data", data]);
        assert.equal(refused.code, 1, `tapedeck ${args.join(" ")}: ${refused.stderr}`);
        assert.ok(refused.stderr.includes(`No Tapedeck data folder at ${data}: it does not exist`), `tapedeck ${args.join(" ")}: ${refused.stderr}`);
        assert.match(refused.stderr, /--data <dir> or TAPEDECK_DATA=<dir>/);
        assert.ok(!existsSync(data), `tapedeck ${args.join(" ")} created ${data}`);
      }
      // A test without from_run needs no data folder at all, and creates none.
      const tested = await tapedeck(["test", join(dir, "ok.ts"), "--toolset", join(dir, "toolset.json"), "--data", data]);
      assert.equal(tested.code, 0, tested.stderr);
      assert.ok(!existsSync(data));
    });
  });

  it("run prints the run's id on stderr when it completes, and when it fails with the fork command that fixes it", async () => {
    await withDir(async (dir) => {
      const data = join(dir, "data");
      writeFileSync(join(dir, "ok.ts"), SCRIPT_OK);
      writeFileSync(join(dir, "fails.ts"), SCRIPT_FAILS);
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      const ok = await tapedeck(["run", join(dir, "ok.ts"), "--toolset", join(dir, "toolset.json"), "--data", data]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(JSON.parse(ok.stdout), { ok: true }, "stdout holds the output only");
      const completed = /^run (run_\S+) completed \(tapedeck show \1 --data (\S+)\)$/m.exec(ok.stderr);
      assert.ok(completed, ok.stderr);
      assert.equal(completed[2], data);

      const failed = await tapedeck(["run", join(dir, "fails.ts"), "--toolset", join(dir, "toolset.json"), "--data", data]);
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /boom/);
      const hint =
        /^run (run_\S+) failed \(tapedeck show \1 --data \S+\)\. Fix the script and fork the run; the calls it completed are reused, not sent again: tapedeck fork \1 (\S+) --data (\S+)$/m.exec(
          failed.stderr,
        );
      assert.ok(hint, failed.stderr);
      assert.deepEqual([hint[2], hint[3]], [join(dir, "fails.ts"), data]);
      // The hint works as printed: the fork runs (with the script fixed).
      writeFileSync(join(dir, "fails.ts"), SCRIPT_OK);
      const forked = await tapedeck(["fork", hint[1]!, hint[2]!, "--data", hint[3]!]);
      assert.equal(forked.code, 0, forked.stderr);
      assert.match(forked.stderr, /^run run_\S+ completed/m);
    });
  });

  it("check names the file it was given, in each diagnostic and in its verdict", async () => {
    await withDir(async (dir) => {
      const script = join(dir, "my-script.ts");
      writeFileSync(script, `export default async () => { const n: number = "x"; return n; };`);
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      const checked = await tapedeck(["check", script, "--toolset", join(dir, "toolset.json")]);
      assert.equal(checked.code, 1);
      assert.ok(checked.stderr.startsWith(`${script}:1:`), checked.stderr);
      assert.ok(checked.stderr.endsWith(`${script}: 1 error against ${join(dir, "toolset.json")}`), checked.stderr);
      const run = await tapedeck(["run", script, "--toolset", join(dir, "toolset.json"), "--data", join(dir, "data")]);
      assert.ok(run.stderr.startsWith(`${script}:1:`) && run.stderr.endsWith(`${script} does not type-check: no run was started.`), run.stderr);
    });
  });

  it("credentials set refuses a toolset the data folder does not have, and warns when none of its hosts is one the toolset reaches", async () => {
    await withDir(async (dir) => {
      const data = join(dir, "data");
      writeFileSync(join(dir, "toolset.json"), TOOLSET);
      const registered = await tapedeck(["toolset", "register", join(dir, "toolset.json"), "--data", data]);
      const toolset = registered.stdout.split("\n")[0]!;
      const set = (host: string, id = toolset) =>
        tapedeck(["credentials", "set", "API", "--kind", "bearer", "--host", host, "--toolset", id, "--from-env", "TOKEN", "--data", data], {
          TOKEN: "t0ken-value",
        });

      const unknown = await set("api.example.com", "ts_unknown");
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, new RegExp(`No toolset ts_unknown in the data folder ${data.replaceAll("/", "\\/")}; nothing was stored`));
      assert.equal((await tapedeck(["credentials", "list", "--data", data])).stdout, "", "nothing was stored");

      const matching = await set("api.example.com");
      assert.equal(matching.code, 0, matching.stderr);
      assert.doesNotMatch(matching.stderr, /warning/);
      const wildcard = await set("*.example.com");
      assert.doesNotMatch(wildcard.stderr, /warning/, "*.example.com covers api.example.com");

      const typo = await set("api.exmaple.com");
      assert.equal(typo.code, 0, "stored all the same");
      assert.match(
        typo.stderr,
        new RegExp(`warning: API is bound to api.exmaple.com, but toolset ${toolset} never sends a request there: its requests go to api.example.com\\.`),
      );
      assert.ok(!`${typo.stdout}${typo.stderr}`.includes("t0ken-value"));
    });
  });
});

describe("the server's hints name its data folder, in its log only", () => {
  it("the admin key notice and the log say which data folder `tapedeck keys create` must use; a 401 answer says only that the key is unknown", async () => {
    await withCliTest("tapedeck-hints-", async ({ dir }) => {
      const dataDir = join(dir, "served data");
      const server = await startServeChild({ dataDir });
      try {
        assert.ok(server.stderr().includes(`created the admin API key of the data folder ${dataDir}`), server.stderr());
        assert.ok(server.stderr().includes(`tapedeck keys create --data '${dataDir}' --namespace <user>`), server.stderr());
        const none = await fetch(`${server.url}/v1/runs`);
        assert.equal(none.status, 401);
        const noneText = ((await none.json()) as { error: { message: string } }).error.message;
        assert.match(noneText, /Authorization: Bearer <key>/);
        const unknown = await fetch(`${server.url}/v1/runs`, { headers: { authorization: "Bearer tdk_unknown-key-xyzzy" } });
        assert.equal(unknown.status, 401);
        const unknownText = ((await unknown.json()) as { error: { message: string } }).error.message;
        assert.match(unknownText, /^Unknown API key\./);
        for (const text of [noneText, unknownText]) {
          // An unauthenticated caller learns nothing of the server: not its folder, not a command to run there.
          assert.ok(!text.includes(dataDir) && !text.includes("served data") && !text.includes("keys create"), text);
        }
        // The operator's log says why, and how to make a key this server knows; never the key that was sent.
        await server.stderrLine((line) => line.includes("refused (401)") && line.includes("unknown-key"));
        const hint = await server.stderrLine((line) => line.includes("its API key is not one of this server's"));
        assert.ok(hint.includes(`tapedeck keys create --data '${dataDir}'`), hint);
        await server.stderrLine((line) => line.includes("refused (401)") && line.includes("sent no Authorization"));
        assert.ok(!server.stderr().includes("xyzzy"), "the refused key is not logged");
      } finally {
        await server.stop();
      }
    });
  });
});
