import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";

/**
 * The repository's own scripts behind `npm test` and `npm run check`, run on a folder of their
 * own: the test runner gives each file the limit it declares (times the machine's load), so one
 * slow file no longer needs every file's limit raised, and a hung file still fails; the format
 * check reads the files git tracks, never untracked scratch files.
 */
const SCRIPTS = fileURLToPath(new URL("../../../scripts/", import.meta.url));
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function folder(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-scripts-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function script(name: string, cwd: string): Promise<{ code: number | null; output: string }> {
  // Without this test's runner context: a `node --test` started under it skips its files.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, [join(SCRIPTS, name)], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const read = (stream: Readable): Promise<string> =>
    stream
      .setEncoding("utf8")
      .toArray()
      .then((parts: string[]) => parts.join(""));
  const [stdout, stderr] = await Promise.all([read(child.stdout), read(child.stderr)]);
  const [code] = (await once(child, "close")) as [number | null];
  return { code, output: stdout + stderr };
}

const PASSES = `import { it } from "node:test";\nit("passes", () => {});\n`;
/** A test that never ends: a timer keeps its process up, so only the runner's limit stops it. */
const HANGS = `// test-budget-seconds: 1 (a test that hangs)\nimport { it } from "node:test";\nit("hangs", () => new Promise(() => setInterval(() => {}, 1000)));\n`;

describe("the repository's scripts", () => {
  it("run-tests.mjs stops a file at its own declared budget (times the load) and runs the others to their end", { timeout: 120_000 }, async () => {
    const dir = folder({ "packages/a/dist-test/hangs.test.js": HANGS, "packages/a/dist-test/passes.test.js": PASSES });
    const ran = await script("run-tests.mjs", dir);
    assert.equal(ran.code, 1, ran.output);
    assert.match(ran.output, /# packages\/a\/dist-test\/hangs\.test\.js \(limit \d+ s: budget 1 s × load \d+\.\d\)/);
    assert.match(ran.output, /# packages\/a\/dist-test\/passes\.test\.js \(limit \d+ s: budget 300 s × load/);
    assert.match(ran.output, /1 of 2 test files passed\.\nFailed:\n {2}packages\/a\/dist-test\/hangs\.test\.js\n/);
  });

  it("check-format.mjs checks the files git tracks and not an untracked scratch file", async () => {
    const dir = folder({ "tracked.ts": "export const a = 1;\n", "scratch.ts": "export   const b=2\n" });
    const git = (...args: string[]) => assert.equal(spawnSync("git", args, { cwd: dir }).status, 0, `git ${args.join(" ")}`);
    git("init", "-q");
    git("add", "tracked.ts");
    const clean = await script("check-format.mjs", dir);
    assert.equal(clean.code, 0, clean.output);
    git("add", "scratch.ts");
    const dirty = await script("check-format.mjs", dir);
    assert.equal(dirty.code, 1, dirty.output);
    assert.match(dirty.output, /scratch\.ts/);
  });
});
