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
import { BASELINE, listed, outputDirOf, report, results, suite } from "./suite.mjs";

const CLIENT = "packages/engine/dist-test/sources/mcp/conformance-client.js";

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

const outputDir = outputDirOf("tapedeck-conformance-");
if (process.execPath.includes(" ")) throw new Error(`the suite splits its --command on spaces; run from a Node without spaces in its path (${process.execPath})`);

const names = await listed("client");
const started = performance.now();
const failedParts = [];
for (const part of PARTS) {
  const { code, output } = await suite(["client", "--command", `${process.execPath} ${CLIENT}`, ...part, "--expected-failures", BASELINE, "-o", outputDir]);
  if (code !== 0) failedParts.push({ part: part.join(" "), output });
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);

const { passing, missing } = report(names, results(outputDir));
console.log(`conformance: ${passing}/${names.length} client scenarios pass, in ${seconds} s; results in ${outputDir}`);
for (const { part, output } of failedParts) console.log(`\n--- part failed against ${BASELINE}: ${part}\n${output.split("\n").slice(-25).join("\n")}`);
if (names.length === 0) console.log("the suite listed no client scenarios: is it installed?");
if (missing.length > 0) console.log(`not run by any part (add them to PARTS): ${missing.join(", ")}`);
process.exitCode = failedParts.length > 0 || missing.length > 0 || names.length === 0 ? 1 : 0;
