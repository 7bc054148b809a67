// Runs the MCP conformance suite (@modelcontextprotocol/conformance, client mode, pinned in the
// root package.json) against Tapedeck's conformance client, with conformance/baseline.yml as
// the expected failures. Needs a build (`tsc -b`). Usage:
//   node scripts/conformance/run.mjs [--output-dir DIR]   (DIR new or empty; default: a temp dir)
// Prints one line per scenario and `conformance: n/N client scenarios pass`; exits 0 when every
// part passes against the baseline and every client scenario the suite lists was run.
//
// The suite runs in parts, one after the other: the scenarios without timing checks in parallel
// (the suite's own groups), then sse-retry alone. Its check "reconnect within retry + 200 ms"
// measured up to 718 ms when 25 other scenarios started beside it, and 502-510 ms alone.
// Every server the suite starts listens on 127.0.0.1 only (loopback.mjs).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLIENT = "packages/engine/dist-test/sources/mcp/conformance-client.js";
const BASELINE = "conformance/baseline.yml";
const SUITE = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const PRELOADS = ["--import", "./scripts/conformance/node20-globsync.mjs", "--import", "./scripts/conformance/loopback.mjs"];
/** Each part is one run of the suite's CLI; together they cover every client scenario once. */
const PARTS = [
  ["--suite", "auth"],
  ["--suite", "backcompat"],
  ["--suite", "draft"],
  ["--suite", "extensions"],
  ["--scenario", "initialize"],
  ["--scenario", "tools_call"],
  ["--scenario", "elicitation-sep1034-client-defaults"],
  ["--scenario", "sse-retry"],
];

const outputFlag = process.argv.indexOf("--output-dir");
const outputDir = outputFlag === -1 ? mkdtempSync(join(tmpdir(), "tapedeck-conformance-")) : process.argv[outputFlag + 1];
if (outputDir === undefined || (existsSync(outputDir) && readdirSync(outputDir).length > 0)) throw new Error(`--output-dir needs an empty or new directory (${outputDir})`);
if (process.execPath.includes(" ")) throw new Error(`the suite splits its --command on spaces; run from a Node without spaces in its path (${process.execPath})`);

/** Runs the suite's CLI; resolves with its exit code and output. */
function suite(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...PRELOADS, SUITE, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Every `checks.json` under `dir`, by scenario name (its directory, less the timestamp). */
function results(dir) {
  const found = new Map();
  const walk = (path) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) walk(child);
      else if (name === "checks.json") found.set(relative(dir, path).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, ""), JSON.parse(readFileSync(child, "utf8")));
    }
  };
  walk(dir);
  return found;
}

const listed = (await suite(["list", "--client"])).output
  .split("\n")
  .map((line) => /^ {2}- (\S+)/.exec(line)?.[1])
  .filter((name) => name !== undefined);
const started = performance.now();
const failedParts = [];
for (const part of PARTS) {
  const { code, output } = await suite(["client", "--command", `${process.execPath} ${CLIENT}`, ...part, "--expected-failures", BASELINE, "-o", outputDir]);
  if (code !== 0) failedParts.push({ part: part.join(" "), output });
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);

const ran = results(outputDir);
let passing = 0;
for (const name of listed) {
  const checks = ran.get(name);
  const bad = checks?.filter((check) => check.status === "FAILURE" || check.status === "WARNING") ?? [];
  if (checks && bad.length === 0) passing++;
  const verdict = !checks ? "NOT RUN" : bad.length === 0 ? "pass" : `FAIL: ${bad.map((check) => `${check.id} (${check.status})`).join(", ")}`;
  console.log(`${name}: ${verdict}`);
}
const missing = listed.filter((name) => !ran.has(name));
console.log(`conformance: ${passing}/${listed.length} client scenarios pass, in ${seconds} s; results in ${outputDir}`);
for (const { part, output } of failedParts) console.log(`\n--- part failed against ${BASELINE}: ${part}\n${output.split("\n").slice(-25).join("\n")}`);
if (listed.length === 0) console.log("the suite listed no client scenarios: is it installed?");
if (missing.length > 0) console.log(`not run by any part (add them to PARTS): ${missing.join(", ")}`);
process.exitCode = failedParts.length > 0 || missing.length > 0 || listed.length === 0 ? 1 : 0;
