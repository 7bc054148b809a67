import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine } from "@tapedeck/engine";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

/**
 * `tapedeck credentials`: values come from stdin or `--from-env`, never from an argument, and
 * are never printed; every line the commands printed and the whole data folder are scanned.
 * (The engine's `findSecrets` is not public API; the CLI's data folder has no runs, so scanning
 * its files and the printed lines covers everything.)
 */

function findSecrets(dir: string, secrets: readonly string[], printed: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, name));
    for (const secret of secrets) if (bytes.includes(Buffer.from(secret))) found.push(`${secret} in ${name}`);
  }
  for (const secret of secrets) if (printed.includes(secret)) found.push(`${secret} in the CLI's output`);
  return found;
}

/** Registers a toolset whose `fetch` reaches the hosts the credentials are bound to; resolves with its id. */
async function registerToolset(dir: string): Promise<string> {
  writeFileSync(join(dir, "toolset.json"), JSON.stringify({ http: { allow: ["api.github.com", "*.example.com"] } }));
  const io = capture();
  assert.equal(await cli(["toolset", "register", join(dir, "toolset.json"), "--data", dir], io), 0, io.err.join("\n"));
  return io.out[0]!;
}

const SECRET = "cli_secret_value_4b9e2d71";
const ENV_SECRET = "cli_env_secret_value_8c3a";

describe("tapedeck credentials", () => {
  it("set (stdin, --from-env), list, rotate-key, delete: no value printed or stored in clear", async () => {
    await withDir(async (dir) => {
      const printed: string[] = [];
      const run = async (args: string[], stdin?: string) => {
        const io = { ...capture(), ...(stdin === undefined ? {} : { readStdin: () => Promise.resolve(stdin) }) };
        const code = await cli(["credentials", ...args, "--data", dir], io);
        printed.push(...io.out, ...io.err);
        return { code, out: io.out, err: io.err.join("\n") };
      };
      const toolset = await registerToolset(dir);
      assert.equal((await run(["set", "GH", "--kind", "bearer", "--host", "api.github.com", "--toolset", toolset], `${SECRET}\n`)).code, 0);
      assert.equal(statSync(join(dir, "master.key")).mode & 0o777, 0o600);
      process.env.TAPEDECK_TEST_CRED = ENV_SECRET;
      try {
        const set = await run([
          "set",
          "Q",
          "--kind",
          "query",
          "--param",
          "api_key",
          "--host",
          "*.example.com",
          "--toolset",
          toolset,
          "--namespace",
          "alice",
          "--from-env",
          "TAPEDECK_TEST_CRED",
        ]);
        assert.equal(set.code, 0, set.err);
      } finally {
        delete process.env.TAPEDECK_TEST_CRED;
      }
      const extra = await run(["set", "X", SECRET, "--kind", "bearer", "--host", "a.example.com", "--toolset", toolset]);
      assert.equal(extra.code, 2);
      assert.match(extra.err, /never from an argument/);
      assert.deepEqual((await run(["list"])).out, [
        `GH\tbearer\ttoolset ${toolset}\tapi.github.com`,
        `Q\tquery\tnamespace "alice" of toolset ${toolset}\t*.example.com`,
      ]);
      const rotated = await run(["rotate-key"]);
      assert.match(rotated.err, /2 credential\(s\) re-encrypted/);
      assert.equal((await run(["delete", "GH", "--toolset", toolset])).code, 0);
      assert.equal((await run(["delete", "GH", "--toolset", toolset])).code, 1);

      const engine = await Engine.open({ store: dir, wake: false });
      try {
        const ns = await engine.credentials.resolve({ runId: "run_x", toolsetId: toolset, namespace: "alice" }, "a.example.com");
        assert.deepEqual(ns.kind === "found" ? ns.secret : undefined, { kind: "query", param: "api_key", value: ENV_SECRET });
        const output = printed.join("\n");
        assert.deepEqual(findSecrets(dir, [SECRET, ENV_SECRET], output), []);
        assert.ok(findSecrets(dir, ["api.github.com"], output).length > 0, "control: the scan finds what was printed");
      } finally {
        await engine.close();
      }
    });
  });

  it("--expires-in and --expires-at record when a credential expires; list shows it; a bad time is a usage error", async () => {
    await withDir(async (dir) => {
      const run = async (args: string[]) => {
        const io = { ...capture(), readStdin: () => Promise.resolve(`${SECRET}\n`) };
        const code = await cli(["credentials", ...args, "--data", dir], io);
        return { code, out: io.out, err: io.err.join("\n") };
      };
      const toolset = await registerToolset(dir);
      assert.equal(
        (await run(["set", "SOON", "--kind", "bearer", "--host", "a.example.com", "--toolset", toolset, "--expires-at", "2031-01-02T03:04:05Z"])).code,
        0,
      );
      const before = Date.now();
      assert.equal((await run(["set", "HOUR", "--kind", "bearer", "--host", "b.example.com", "--toolset", toolset, "--expires-in", "1h"])).code, 0);
      const listed = (await run(["list"])).out;
      assert.equal(listed[0], `SOON\tbearer\ttoolset ${toolset}\ta.example.com\texpires 2031-01-02T03:04:05.000Z`);
      const hour = Date.parse(listed[1]?.split("\texpires ")[1] ?? "");
      assert.ok(hour >= before + 3_600_000 && hour <= Date.now() + 3_600_000, listed[1]);
      const bad = await run(["set", "BAD", "--kind", "bearer", "--host", "c.example.com", "--toolset", toolset, "--expires-at", "next tuesday"]);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--expires-at must be an ISO time/);
    });
  });
});
