import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * `tapedeck runs follow <id>` against a real `tapedeck serve`: it prints the run's entries and
 * states live while the run waits and goes on, then its output, and exits 0; a run outside the
 * key's scope is answered as missing (exit 1).
 */
const CLI = fileURLToPath(new URL("./main.js", import.meta.url));

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;

before(async () => {
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create({})).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** The real `tapedeck runs follow` in a child process; `onLine` hears each stdout line as it comes. */
async function follow(
  runId: string,
  apiKey: string,
  onLine: (line: string) => void = () => undefined,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return cli(["runs", "follow", runId, "--url", server.url], apiKey, onLine);
}

/** The real CLI with `args` in a child process; `onLine` hears each stdout line as it comes (and may stop the child). */
async function cli(
  args: readonly string[],
  apiKey: string,
  onLine: (line: string, child: ReturnType<typeof spawn>) => void = () => undefined,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, TAPEDECK_API_KEY: apiKey },
  });
  let stdout = "";
  let stderr = "";
  createInterface({ input: child.stdout }).on("line", (line) => {
    stdout += `${line}\n`;
    onLine(line, child);
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

async function start(source: string): Promise<string> {
  const started = await admin.runs.start({ toolset, source });
  return started.kind === "started" ? started.run.id : assert.fail(`refused: ${JSON.stringify(started)}`);
}

describe("tapedeck runs follow", () => {
  it("prints a run's entries and states live until it ends, then its output", async () => {
    const id = await start(`export default async () => { console.log("before"); const n = await signal<number>("go"); return n * 2; };`);
    let signalled: Promise<unknown> | undefined;
    const result = await follow(id, server.adminKey!, (line) => {
      // Signalled only once the follower has seen the run wait: what follows reaches it live.
      if (signalled === undefined && line.includes('waits for signal "go"')) signalled = admin.runs.signal(id, { name: "go", payload: 21 });
    });
    assert.ok(signalled, result.stdout);
    await signalled;
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split("\n");
    assert.match(lines.find((line) => line.includes("waits for")) ?? "", /^status {3}waiting {2}waits for signal "go"$/);
    assert.equal(lines.at(-1), "output   42");
    assert.ok(lines.indexOf("status   completed") > lines.findIndex((line) => line.includes("waits for")), result.stdout);
    const journal = (await admin.runs.journal(id, { limit: 100 })).entries;
    assert.equal(lines.filter((line) => /^ *\d+ \d{4}-\d\d-\d\dT/.test(line)).length, journal.length, result.stdout);
  });

  it("answers a run outside the key's scope as missing", async () => {
    const id = await start(`export default async () => signal<number>("go");`);
    const result = await follow(id, await createKey(server.dataDir, "--label", "tenant=b"));
    assert.equal(result.code, 1);
    // What the server answers for a run that does not exist, and nothing more.
    assert.equal(result.stderr, `error: No run ${id}.\n`);
    assert.equal(result.stdout, "");
    await admin.runs.cancel(id, { reason: "done" });
  });

  it("show --follow prints the same live view as runs follow", async () => {
    const id = await start(`export default async () => (await signal<number>("go")) + 1;`);
    let signalled: Promise<unknown> | undefined;
    const result = await cli(["show", id, "--follow", "--url", server.url], server.adminKey!, (line) => {
      if (signalled === undefined && line.includes('waits for signal "go"')) signalled = admin.runs.signal(id, { name: "go", payload: 41 });
    });
    assert.ok(signalled, result.stdout);
    await signalled;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trimEnd().split("\n").at(-1), "output   42");
  });
});

describe("tapedeck runs --watch", () => {
  it("lists the key's runs, then prints a line each time one changes, live; another tenant's runs never appear; Ctrl-C ends it with 0", async () => {
    const aKey = await createKey(server.dataDir, "--label", "tenant=a");
    const a = server.client(aKey);
    const b = server.client(await createKey(server.dataDir, "--label", "tenant=b"));
    const source = `export default async () => (await signal<number>("go")) * 2;`;
    const startOn = async (td: Tapedeck): Promise<string> => {
      const started = await td.runs.start({ toolset, source });
      return started.kind === "started" ? started.run.id : assert.fail(`refused: ${JSON.stringify(started)}`);
    };
    const mine = await startOn(a);
    const theirs = await startOn(b);
    await a.runs.get(mine, { wait: 30 });
    await b.runs.get(theirs, { wait: 30 });
    let phase: "listed" | "signalled" | "done" = "listed";
    const result = await cli(["runs", "--watch", "--url", server.url], aKey, (line, child) => {
      if (phase === "listed" && line.startsWith(`${mine}  waiting`)) {
        // Listed: the stream is open (the list is read after it opened), so the change reaches it live.
        phase = "signalled";
        void b.runs.signal(theirs, { name: "go", payload: 1 }).then(() => a.runs.signal(mine, { name: "go", payload: 21 }));
      } else if (phase === "signalled" && line.startsWith(`${mine}  completed`)) {
        phase = "done";
        child.kill("SIGINT");
      }
    });
    assert.equal(phase, "done", result.stdout + result.stderr);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(theirs), `another tenant's run was printed:\n${result.stdout}`);
    assert.match(result.stdout, new RegExp(`^${mine}  waiting +\\S+ +\\d+ entries  .*signal "go"`, "m"));
  });
});
