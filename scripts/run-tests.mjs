// Runs every compiled test file of every package with Node's test runner.
// Test files are TypeScript compiled by `tsc -b` (so they are type-checked like the code), each
// package's into its dist-test/ (tsconfig.test.json: the whole of src, tests included; dist/ holds
// the product only). Every *.test.js found there runs.
// Usage: node scripts/run-tests.mjs [substring filter…]
//
// Each file runs in its own `node --test` process, two at a time, its output printed whole when
// it ends (so two files' lines never interleave). A file that hangs fails after its own time
// limit instead of holding CI: its budget times the machine's load when it starts.
// - The budget is what the file needs on an idle machine with a margin: `DEFAULT_BUDGET_S`, or
//   what the file declares in a line of its own, `// test-budget-seconds: 900 (why)`, near its
//   top. One fixed limit for every file failed `npm test` at load 25 on 2 cores, when the slowest
//   file passed it.
// - The load factor is the one-minute load average per core, from 1 (idle) to `MAX_LOAD_FACTOR`:
//   a loaded machine gives each file the time it takes there, a hung file still fails.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";

/** The budget of a file that declares none: the files that declare none take under two minutes on an idle machine. */
const DEFAULT_BUDGET_S = 300;
/** How far the load stretches a budget: past it a file is taken to hang, whatever the load. */
const MAX_LOAD_FACTOR = 6;
/** Files run at once (each one's tests may start processes of their own). */
const CONCURRENCY = 2;
const BUDGET_LINE = /^\/\/ test-budget-seconds: (\d+)\b/m;

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

function budgetOf(file) {
  const declared = BUDGET_LINE.exec(readFileSync(file, "utf8"));
  return declared ? Number(declared[1]) : DEFAULT_BUDGET_S;
}

function loadFactor() {
  return Math.min(MAX_LOAD_FACTOR, Math.max(1, loadavg()[0] / availableParallelism()));
}

/** Runs one file to its end (or its limit); resolves with whether it passed, after printing its output. */
function runFile(file) {
  const factor = loadFactor();
  const limitMs = Math.round(budgetOf(file) * factor * 1000);
  const child = spawn(process.execPath, ["--test", `--test-timeout=${limitMs}`, "--test-reporter=spec", file], { stdio: ["ignore", "pipe", "pipe"] });
  const output = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      process.stdout.write(`\n# ${file} (limit ${Math.round(limitMs / 1000)} s: budget ${budgetOf(file)} s × load ${factor.toFixed(1)})\n`);
      const text = Buffer.concat(output).toString("utf8");
      process.stdout.write(text);
      const passed = code === 0 && signal === null;
      const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
      totals.pass += count("pass");
      totals.skipped += count("skipped") + count("todo");
      // A file that failed without a failing test (it hung, or crashed before its summary) counts one failure.
      totals.fail += Math.max(count("fail") + count("cancelled"), passed ? 0 : 1);
      resolve(passed);
    });
  });
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
const failed = [];
/** Tests counted across files, from each file's closing lines, for the one closing line of the whole run. */
const totals = { pass: 0, fail: 0, skipped: 0 };
const queue = [...selected];
await Promise.all(
  Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) if (!(await runFile(file))) failed.push(file);
  }),
);
console.log(`\n${selected.length - failed.length} of ${selected.length} test files passed.`);
if (failed.length > 0) console.log(`Failed:\n${failed.map((f) => `  ${f}`).join("\n")}`);
console.log(`${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
process.exit(failed.length === 0 ? 0 : 1);
