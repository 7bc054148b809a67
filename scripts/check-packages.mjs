// Checks that the packages work installed, outside this repository, as a user's project gets
// them: `npm pack` of every workspace, `npm install <the tarballs>` into an empty folder (the
// registry gives the third-party dependencies), then from that folder only:
//   - `node_modules/.bin/tapedeck --help` and `npx --no-install tapedeck --help` (never the
//     registry's unrelated `tapedeck` package);
//   - `tapedeck run` of a script with a TypeScript host module (tsx, installed);
//   - `tapedeck serve`, its web console's page and bundle, and a run through `@tapedeck/sdk` with
//     a worker serving its host tool;
//   - `Tapedeck.embedded` (the SDK loading `@tapedeck/server/embedded`).
// It also checks that no test code is in a tarball. Needs a build (`tsc -b`, done by `npm ci`).
// Usage: node scripts/check-packages.mjs   (prints each step with its time; exit 1 on a failure)
//
// Cost: installing compiles better-sqlite3 from source when no prebuilt binary can be fetched
// (about 1.5 min on 2 cores). The addon `npm ci` built for this repository is offered to the
// install as a local prebuild (prebuild-install's `<pkg>_local_prebuilds`), so when the version
// npm resolves is the repository's, nothing is compiled twice; otherwise it compiles as a user's
// install would. Tarballs come from the npm cache when it has them (`--prefer-offline`).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Far more than any step takes (the install, compiling better-sqlite3, about 1.5 min): a step past it is stuck. */
const STEP_TIMEOUT_MS = 10 * 60_000;

const work = mkdtempSync(join(tmpdir(), "tapedeck-packages-"));
const app = join(work, "app");
const started = Date.now();
let server;

try {
  const tarballs = await step("npm pack every workspace", () => pack(join(work, "tarballs")));
  await step("no test code in the tarballs", () => noTestCode(tarballs));
  const prebuilds = await step("offer the repository's better-sqlite3 build as a local prebuild", () => localPrebuild(join(work, "prebuilds")));
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "tapedeck-package-check", private: true, type: "module" }, null, 2)}\n`);
  writeFixture(app);
  await step("npm install <tarballs> into an empty folder", () =>
    run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...tarballs.map((t) => t.path)], { cwd: app, env: prebuilds }),
  );
  const bin = join(app, "node_modules", ".bin", "tapedeck");
  await step("node_modules/.bin/tapedeck --help", async () => expect((await run(bin, ["--help"], { cwd: app })).stdout, /^usage:\n {2}tapedeck check/));
  await step("npx --no-install tapedeck --help", async () =>
    expect((await run("npx", ["--no-install", "tapedeck", "--help"], { cwd: app })).stdout, /^usage:\n {2}tapedeck check/),
  );
  await step("tapedeck run with a TypeScript host module", async () => {
    const done = await run(bin, ["run", "script.ts", "--toolset", "toolset.json", "--host", "tools.ts", "--data", "cli-data"], { cwd: app });
    expect(done.stdout, /"cents": 4550/);
    expect(done.stderr, /^run run_\S+ completed/m);
  });
  server = await step("tapedeck serve", () => serve(bin));
  await step("tapedeck serve serves the web console (its bundle is in the tarball)", async () => {
    for (const [path, type] of [
      ["/", "text/html"],
      ["/console/app.js", "text/javascript"],
      ["/console/app.css", "text/css"],
    ]) {
      const response = await fetch(`${server.url}${path}`);
      const body = await response.text();
      if (response.status !== 200 || !(response.headers.get("content-type") ?? "").startsWith(type) || body.length < 100)
        throw new Error(`GET ${path} answered ${response.status} ${response.headers.get("content-type")}: ${body.slice(0, 300)}`);
    }
  });
  await step("a run through @tapedeck/sdk with a worker, then Tapedeck.embedded", async () => {
    const done = await run(process.execPath, ["sdk-check.mjs", server.url, server.adminKey], { cwd: app });
    expect(done.stdout, /^served: \{"sku":"b-1","cents":4550\}\nembedded: \{"sku":"b-1","cents":4550\}$/m);
  });
  await step("tapedeck serve stops on SIGTERM", () => server.stop());
  server = undefined;
  console.log(`packages: installed and working outside the repository (${seconds(Date.now() - started)})`);
} catch (error) {
  console.error(`packages: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await server?.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}

/** Runs `fn`, printing its name and how long it took. */
async function step(name, fn) {
  const at = Date.now();
  try {
    const result = await fn();
    console.log(`  ok  ${name} (${seconds(Date.now() - at)})`);
    return result;
  } catch (error) {
    console.log(`  FAIL ${name} (${seconds(Date.now() - at)})`);
    throw error;
  }
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function expect(text, pattern) {
  if (!pattern.test(text)) throw new Error(`expected ${pattern} in:\n${text}`);
}

/** Runs a command to its end; rejects with its output when it exits non-zero (or is stuck). */
function run(command, args, { cwd, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), STEP_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${command} ${args.join(" ")} exited ${code ?? signal}:\n${stdout}\n${stderr}`));
    });
  });
}

/** `npm pack` of every workspace; resolves with each package's name, tarball and files. */
async function pack(destination) {
  mkdirSync(destination);
  const { stdout } = await run("npm", ["pack", "--workspaces", "--json", "--pack-destination", destination], { cwd: ROOT });
  const packed = JSON.parse(stdout);
  if (packed.length !== 4) throw new Error(`expected 4 packages, npm packed ${packed.map((p) => p.name).join(", ")}`);
  return packed.map((p) => ({ name: p.name, path: join(destination, p.filename), files: p.files.map((f) => f.path) }));
}

/**
 * Test files, test helpers and build state are for the repository only: the product build (each
 * package's tsconfig.json) leaves them out of dist/, and this checks that it did.
 */
function noTestCode(tarballs) {
  const shipped = tarballs.flatMap((t) =>
    t.files
      .filter((f) => /\.test\.|test-support\/|hostile\/|\.tsbuildinfo|^dist\/bench\/(main|leak-scan-corpus)\.|crash-child\.|conformance-[^/]*$/.test(f))
      .map((f) => `${t.name}: ${f}`),
  );
  if (shipped.length > 0)
    throw new Error(
      `test code is packed (a dist/ built before test code moved to dist-test/ keeps it: rm -rf packages/*/dist && npx tsc -b):\n${shipped.join("\n")}`,
    );
}

/**
 * The repository's compiled better-sqlite3 addon, as the prebuilt archive prebuild-install looks
 * for first; returns the environment that points the install at it (none without a build).
 */
async function localPrebuild(dir) {
  const pkg = join(ROOT, "node_modules", "better-sqlite3");
  const addon = join(pkg, "build", "Release", "better_sqlite3.node");
  if (!existsSync(addon)) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  mkdirSync(dir);
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run("tar", ["-czf", join(dir, archive), "-C", pkg, "build/Release/better_sqlite3.node"]);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** `tapedeck serve` on a free port; resolves once it listens, with its address and admin key. */
function serve(bin) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["serve", "--port", "0", "--data", "server-data"], { cwd: app, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let url;
    let adminKey;
    const exited = new Promise((done) => child.on("close", (code, signal) => done(code ?? signal)));
    const ready = () => {
      if (url && adminKey) resolve({ url, adminKey, stop: () => stop(child, exited) });
    };
    createInterface({ input: child.stdout }).on("line", (line) => {
      url ??= /^tapedeck listening on (\S+)$/.exec(line)?.[1];
      // Its stdout is no terminal: the first start wrote the admin key to the data folder (mode 0600) before it said it listens, never into its log.
      if (url) adminKey ??= readFileSync(join(app, "server-data", "admin-key"), "utf8").trim();
      ready();
    });
    createInterface({ input: child.stderr }).on("line", (line) => {
      stderr += `${line}\n`;
    });
    void exited.then((code) => reject(new Error(`tapedeck serve exited (${code}) before listening:\n${stderr}`)));
  });
}

async function stop(child, exited) {
  child.kill("SIGTERM");
  const code = await exited;
  if (code !== 0) throw new Error(`tapedeck serve exited ${code} on SIGTERM`);
}

/** A toolset with one host tool, a script calling it, its TypeScript module, and the SDK's check. */
function writeFixture(dir) {
  const toolset = {
    hostTools: {
      shop: {
        price: {
          description: "The price of an item, in cents.",
          inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
          outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "integer" } }, required: ["sku", "cents"] },
        },
      },
    },
  };
  const script = `import { shop } from "tapedeck:tools";\nexport default async () => shop.price({ sku: "b-1" });\n`;
  writeFileSync(join(dir, "toolset.json"), JSON.stringify(toolset, null, 2));
  writeFileSync(join(dir, "script.ts"), script);
  writeFileSync(join(dir, "tools.ts"), `export const shop = {\n  price: async ({ sku }: { sku: string }) => ({ sku, cents: 4550 }),\n};\n`);
  writeFileSync(
    join(dir, "sdk-check.mjs"),
    `import { Tapedeck } from "@tapedeck/sdk";
const [baseUrl, apiKey] = process.argv.slice(2);
const toolset = ${JSON.stringify(toolset)};
const source = ${JSON.stringify(script)};
const price = async ({ sku }) => ({ sku, cents: 4550 });

async function runOn(td) {
  const { id } = await td.toolsets.create(toolset);
  const started = await td.runs.start({ toolset: id, source });
  if (started.kind !== "started") throw new Error(JSON.stringify(started.diagnostics));
  const run = await td.runs.get(started.run.id, { wait: 30 });
  if (run.status !== "completed") throw new Error(\`the run ended \${run.status}: \${JSON.stringify(run.error)}\`);
  return JSON.stringify(run.output);
}

const td = new Tapedeck({ baseUrl, apiKey });
const worker = td.worker({ tools: { shop: { price } } }).start();
try {
  console.log(\`served: \${await runOn(td)}\`);
} finally {
  await worker.stop();
}
const embedded = await Tapedeck.embedded({ dataDir: "embedded-data", hostTools: { shop: { price } } });
try {
  console.log(\`embedded: \${await runOn(embedded)}\`);
} finally {
  await embedded.close();
}
`,
  );
}
