// What the client and server conformance runs share (run.mjs, server.mjs): the suite's CLI, its
// results on disk, the output folder and the per-scenario report.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BASELINE = "conformance/baseline.yml";
const SUITE = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const PRELOADS = ["--import", "./scripts/conformance/node20-globsync.mjs", "--import", "./scripts/conformance/loopback.mjs"];

/** `--output-dir DIR` of this process's arguments (new or empty), else a new temp folder named from `prefix`. */
export function outputDirOf(prefix) {
  const flag = process.argv.indexOf("--output-dir");
  const dir = flag === -1 ? mkdtempSync(join(tmpdir(), prefix)) : process.argv[flag + 1];
  if (dir === undefined || (existsSync(dir) && readdirSync(dir).length > 0)) throw new Error(`--output-dir needs an empty or new directory (${dir})`);
  return dir;
}

/** Runs the suite's CLI; resolves with its exit code and output. */
export function suite(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...PRELOADS, SUITE, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** The scenarios the suite lists for `side` ("client" or "server"). */
export async function listed(side) {
  return (await suite(["list", `--${side}`])).output
    .split("\n")
    .map((line) => /^ {2}- (\S+)/.exec(line)?.[1])
    .filter((name) => name !== undefined);
}

/** Every `checks.json` under `dir`, by scenario name (its directory, less `prefix` and the timestamp). */
export function results(dir, prefix = "") {
  const found = new Map();
  const walk = (path) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) walk(child);
      else if (name === "checks.json") {
        const scenario = relative(dir, path).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
        found.set(scenario.startsWith(prefix) ? scenario.slice(prefix.length) : scenario, JSON.parse(readFileSync(child, "utf8")));
      }
    }
  };
  walk(dir);
  return found;
}

/** Prints a line per listed scenario (pass, its failing checks, or not run); returns how many passed and which were not run. */
export function report(names, ran) {
  let passing = 0;
  for (const name of names) {
    const checks = ran.get(name);
    // A warning fails a scenario as the suite counts it (its baseline check does too).
    const bad = checks?.filter((check) => check.status === "FAILURE" || check.status === "WARNING") ?? [];
    if (checks && bad.length === 0) passing++;
    const verdict = !checks ? "NOT RUN" : bad.length === 0 ? "pass" : `FAIL: ${bad.map((check) => `${check.id} (${check.status})`).join(", ")}`;
    console.log(`${name}: ${verdict}`);
  }
  return { passing, missing: names.filter((name) => !ran.has(name)) };
}
