// Runs every compiled test file of every package with Node's test runner.
// Test files are TypeScript compiled by `tsc -b` (so they are type-checked like the code), each
// package's into its dist-test/ (tsconfig.test.json: the whole of src, tests included; dist/ holds
// the product only). Every *.test.js found there runs.
// Usage: node scripts/run-tests.mjs [substring filter…]
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [];
for (const pkg of readdirSync("packages")) {
  try {
    walk(join("packages", pkg, "dist-test"), files);
  } catch {
    // A package without a build has no tests to run.
  }
}
const selected = files.filter((f) => filters.length === 0 || filters.some((s) => f.includes(s))).sort();
if (selected.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
// A test that hangs fails after this long instead of holding CI until its own time limit. Node
// applies it to each test file's process as a whole, and the slowest file (the replay
// properties, and the two-node PostgreSQL test with its 200 runs and a SIGKILL) takes one to two
// minutes on an idle machine and over five on a loaded one (load 15 on 2 cores: 300 s was hit).
const TEST_TIMEOUT_MS = 600_000;
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", `--test-timeout=${TEST_TIMEOUT_MS}`, "--test-reporter=spec", ...selected], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
