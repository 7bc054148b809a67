import { it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The MCP conformance suite, client mode, every scenario, against conformance-client.ts (built
 * on McpConnection), with conformance/baseline.yml as the expected failures: exactly what
 * `npm run conformance` runs. Its servers listen on 127.0.0.1 only. It takes ~10 s; past
 * SUITE_LIMIT_MS the whole process group is killed and the test fails.
 */

const ROOT = fileURLToPath(new URL("../../../../../", import.meta.url));
/** Measured ~10 s on 2 cores; each of the suite's 8 parts gives a client at most 30 s. */
const SUITE_LIMIT_MS = 150_000;

function runSuite(outputDir: string): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/conformance/run.mjs", "--output-dir", outputDir], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // The runner, the suite's runners and their clients share one process group: end them all.
    const limit = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, SUITE_LIMIT_MS);
    child.on("error", (error) => {
      clearTimeout(limit);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(limit);
      resolve({ code, output, timedOut });
    });
  });
}

it("passes the MCP conformance suite (client mode, all scenarios, against the baseline)", { timeout: SUITE_LIMIT_MS + 10_000 }, async (t) => {
  const outputDir = mkdtempSync(join(tmpdir(), "tapedeck-conformance-test-"));
  try {
    const { code, output, timedOut } = await runSuite(join(outputDir, "results"));
    assert.equal(timedOut, false, `the suite ran past ${SUITE_LIMIT_MS} ms and was killed:\n${output}`);
    assert.equal(code, 0, output);
    const summary = /^conformance: \d+\/\d+ client scenarios pass.*$/m.exec(output)?.[0];
    assert.ok(summary, output);
    t.diagnostic(summary);
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
});
