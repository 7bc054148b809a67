import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { COMMAND_NAMES } from "./cli.js";
import { startServeChild } from "../http/test-support/serve-child.js";

/**
 * What the `tapedeck` command costs and prints before doing anything: no runtime warning on
 * stderr from any command, the server or an embedded client (Extism's `node:wasi` printed
 * "ExperimentalWarning: WASI is an experimental feature" everywhere while it was loaded with the
 * engine; it is now loaded at the first WebAssembly tool call), and help answered without
 * loading the engine (it cost 1.5 to 2.2 s of CPU; the goal is under 0.3 s).
 */
const CLI = fileURLToPath(new URL("./main.js", import.meta.url));
const SDK = new URL("../../../sdk/dist/index.js", import.meta.url).href;
/** What Node prints for a process warning (`(node:123) ExperimentalWarning: …`, then its hint). */
const RUNTIME_WARNING = /^\(node:\d+\) \w*Warning|--trace-warnings/m;
/** The CPU time (user + system) `--help` may take: Node itself starts in about 0.05 s. */
const HELP_CPU_BUDGET_MS = 300;

const dir = mkdtempSync(join(tmpdir(), "tapedeck-startup-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The child's own CPU time, user + system, in ms (reported on fd 3 as it exits). */
  readonly cpuMs: number;
}

/** Reports the process's CPU time on fd 3 when it exits: preloaded with `--import`. */
const CPU_REPORT = `data:text/javascript,${encodeURIComponent(
  `import { writeSync } from "node:fs"; process.on("exit", () => { const u = process.cpuUsage(); writeSync(3, String((u.user + u.system) / 1000)); });`,
)}`;

async function node(args: readonly string[]): Promise<Ran> {
  const child = spawn(process.execPath, ["--import", CPU_REPORT, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  const read = (stream: Readable): Promise<string> =>
    stream
      .setEncoding("utf8")
      .toArray()
      .then((parts: string[]) => parts.join(""));
  const [stdout, stderr, cpu] = await Promise.all([read(child.stdout!), read(child.stderr!), read(child.stdio[3] as Readable)]);
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr, cpuMs: Number(cpu) };
}

function tapedeck(...args: string[]): Promise<Ran> {
  return node([CLI, ...args, ...(args.includes("--help") ? [] : ["--data", join(dir, "data")])]);
}

describe("the tapedeck command starting up", () => {
  it("help, for the command and every subcommand, prints no runtime warning and stays under 0.3 s of CPU", async () => {
    for (const args of [["--help"], ...COMMAND_NAMES.map((name) => [name, "--help"])]) {
      const ran = await tapedeck(...args);
      assert.deepEqual([ran.code, ran.stderr], [0, ""], `tapedeck ${args.join(" ")}`);
      assert.ok(ran.cpuMs < HELP_CPU_BUDGET_MS, `tapedeck ${args.join(" ")} took ${ran.cpuMs} ms of CPU (budget ${HELP_CPU_BUDGET_MS} ms)`);
    }
  });

  it("check, run, runs, show, serve and an embedded client print their own lines only, no runtime warning", async () => {
    writeFileSync(join(dir, "ok.ts"), `export default async () => ({ ok: true });`);
    writeFileSync(join(dir, "toolset.json"), JSON.stringify({ http: { allow: ["api.example.com"] } }));
    const checked = await tapedeck("check", "ok.ts", "--toolset", "toolset.json");
    assert.equal(checked.code, 0, checked.stderr);
    const ran = await tapedeck("run", "ok.ts", "--toolset", "toolset.json");
    assert.equal(ran.code, 0, ran.stderr);
    const runId = /^run (run_\S+) completed/m.exec(ran.stderr)?.[1];
    assert.ok(runId, ran.stderr);
    const listed = await tapedeck("runs");
    const shown = await tapedeck("show", runId);
    for (const [name, done] of Object.entries({ checked, ran, listed, shown })) {
      assert.equal(done.code, 0, `${name}: ${done.stderr}`);
      assert.doesNotMatch(done.stderr, RUNTIME_WARNING, name);
    }
    const server = await startServeChild();
    assert.equal(await server.stop(), 0, server.stderr());
    server.cleanup();
    assert.doesNotMatch(server.stderr(), RUNTIME_WARNING, "tapedeck serve");

    const embedded = await node([
      "--input-type=module",
      "-e",
      `const { Tapedeck } = await import(${JSON.stringify(SDK)}); const td = await Tapedeck.embedded({ dataDir: ${JSON.stringify(join(dir, "embedded"))} }); await td.close();`,
    ]);
    assert.deepEqual([embedded.code, embedded.stderr], [0, ""], "an embedded client");
  });
});
