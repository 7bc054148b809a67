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
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { BASELINE, listed, outputDirOf, report, results, ROOT, suite } from "./suite.mjs";

const TAPEDECK = "packages/server/bin/tapedeck.js";
const TOOLSET = { hostTools: { notes: { add: { description: "Saves a note.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } } } } };

const outputDir = outputDirOf("tapedeck-conformance-server-");

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

const names = await listed("server");
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

const { passing, missing } = report(names, results(outputDir, "server-"));
console.log(`conformance: ${passing}/${names.length} server scenarios pass against /mcp, in ${seconds} s; results in ${outputDir}`);
if (run.code !== 0) console.log(`\n--- the run does not match ${BASELINE}:\n${run.output.split("\n").slice(-30).join("\n")}`);
if (names.length === 0) console.log("the suite listed no server scenarios: is it installed?");
if (missing.length > 0) console.log(`not run: ${missing.join(", ")}`);
process.exitCode = run.code !== 0 || missing.length > 0 || names.length === 0 ? 1 : 0;
