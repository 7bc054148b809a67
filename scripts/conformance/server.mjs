// Runs the server scenarios of the MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in the root package.json) against `tapedeck serve`'s `/mcp`, with the `server:` list of
// conformance/baseline.yml as the expected failures. Needs a build (`tsc -b`). Usage:
//   node scripts/conformance/server.mjs [--output-dir DIR]   (DIR new or empty; default: a temp dir)
// Prints one line per scenario and `conformance: n/N server scenarios pass`; exits 0 when the
// suite's run matches the baseline (a listed scenario that passes fails the run: "stale") and
// every server scenario the suite lists was run.
//
// The suite's client sends no credential, and `/mcp` needs one: a loopback proxy in this process
// adds `Authorization: Bearer <the server's admin key>` to every request it forwards (Host and
// Origin untouched, so the DNS-rebinding scenario sees what the server answers them). The
// toolset is one host tool (`notes.add`); the URL names it and the end user, as a host's does.
// Only the server's stdio MCP transport is not run here: the suite's server mode speaks HTTP only.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TAPEDECK = "packages/server/bin/tapedeck.js";
const BASELINE = "conformance/baseline.yml";
const SUITE = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
const PRELOADS = ["--import", "./scripts/conformance/node20-globsync.mjs", "--import", "./scripts/conformance/loopback.mjs"];
const TOOLSET = { hostTools: { notes: { add: { description: "Saves a note.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } } } } };

const outputFlag = process.argv.indexOf("--output-dir");
const outputDir = outputFlag === -1 ? mkdtempSync(join(tmpdir(), "tapedeck-conformance-server-")) : process.argv[outputFlag + 1];
if (outputDir === undefined || (existsSync(outputDir) && readdirSync(outputDir).length > 0)) throw new Error(`--output-dir needs an empty or new directory (${outputDir})`);

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

/** `tapedeck serve` on a new data folder, any free loopback port: its URL, admin key and a stop. */
async function serve() {
  const data = mkdtempSync(join(tmpdir(), "tapedeck-conformance-data-"));
  const child = spawn(process.execPath, [TAPEDECK, "serve", "--port", "0", "--data", data, "--log-level", "warn"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const closed = new Promise((resolve) => child.on("close", resolve));
  const url = await new Promise((resolve) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const match = /^tapedeck listening on (\S+)$/.exec(line);
      if (match) resolve(match[1]);
    });
    lines.on("close", () => resolve(undefined));
  });
  if (url === undefined) throw new Error(`tapedeck serve did not start:\n${stderr}`);
  const key = readFileSync(join(data, "admin-key"), "utf8").trim();
  return {
    url,
    key,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      await closed;
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A loopback proxy to `target` adding the bearer credential; resolves with its base URL and a close. */
async function authProxy(target, key) {
  const to = new URL(target);
  const proxy = http.createServer((req, res) => {
    const forwarded = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${proxy.address().port}`,
    close: () => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** Every `checks.json` under `dir`, by scenario name (its directory, less the prefix and timestamp). */
function results(dir) {
  const found = new Map();
  const walk = (path) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) walk(child);
      else if (name === "checks.json")
        found.set(
          relative(dir, path)
            .replace(/^server-/, "")
            .replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, ""),
          JSON.parse(readFileSync(child, "utf8")),
        );
    }
  };
  walk(dir);
  return found;
}

const listed = (await suite(["list", "--server"])).output
  .split("\n")
  .map((line) => /^ {2}- (\S+)/.exec(line)?.[1])
  .filter((name) => name !== undefined);
const server = await serve();
let proxy;
let run;
const started = performance.now();
try {
  const registered = await fetch(new URL("/v1/toolsets", server.url), {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(TOOLSET),
  });
  if (!registered.ok) throw new Error(`registering the toolset: ${registered.status} ${await registered.text()}`);
  const { id } = await registered.json();
  proxy = await authProxy(server.url, server.key);
  const mcpUrl = `${proxy.url}/mcp?toolset=${id}&namespace=conformance`;
  run = await suite(["server", "--url", mcpUrl, "--suite", "all", "--expected-failures", BASELINE, "-o", outputDir]);
} finally {
  await proxy?.close();
  await server.stop();
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);

const ran = results(outputDir);
let passing = 0;
for (const name of listed) {
  const checks = ran.get(name);
  // A warning fails a scenario as the suite counts it (its baseline check does too).
  const bad = checks?.filter((check) => check.status === "FAILURE" || check.status === "WARNING") ?? [];
  if (checks && bad.length === 0) passing++;
  const verdict = !checks ? "NOT RUN" : bad.length === 0 ? "pass" : `FAIL: ${bad.map((check) => `${check.id} (${check.status})`).join(", ")}`;
  console.log(`${name}: ${verdict}`);
}
const missing = listed.filter((name) => !ran.has(name));
console.log(`conformance: ${passing}/${listed.length} server scenarios pass against /mcp, in ${seconds} s; results in ${outputDir}`);
if (run.code !== 0) console.log(`\n--- the run does not match ${BASELINE}:\n${run.output.split("\n").slice(-30).join("\n")}`);
if (listed.length === 0) console.log("the suite listed no server scenarios: is it installed?");
if (missing.length > 0) console.log(`not run: ${missing.join(", ")}`);
process.exitCode = run.code !== 0 || missing.length > 0 || listed.length === 0 ? 1 : 0;
