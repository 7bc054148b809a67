import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import type { Run, Tapedeck, ToolContext, ToolsetSpec } from "@tapedeck/sdk";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { startServeChild } from "./test-support/serve-child.js";

/**
 * `tapedeck serve --store postgres://…` (and `TAPEDECK_STORE`): a real server child process on
 * a PostgreSQL store runs a script end to end through HTTP (its admin key made on the store's
 * first start, a key made with `tapedeck keys create` on `TAPEDECK_STORE`, a host tool served by a worker
 * through the store's host task queue, a signal), and its runs are there after a restart and for
 * the other CLI commands.
 * Needs TAPEDECK_TEST_POSTGRES_URL.
 */
const BIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

const TOOLSET: ToolsetSpec = { hostTools: { mail: { send: { description: "Sends a mail.", inputSchema: { type: "object" } } } } };
const SCRIPT = `import { mail } from "tapedeck:tools";
export default async () => { const sent = await mail.send({ to: "ann" }); const go = await signal("go"); return { sent, go }; };`;

/** Reads the run until `holds` says yes; fails naming what it waited for after 20 s. */
async function until(td: Tapedeck, id: string, what: string, holds: (run: Run) => boolean): Promise<Run> {
  const deadline = Date.now() + 20_000;
  for (let run = await td.runs.get(id); ; run = await td.runs.get(id, { wait: 1 })) {
    if (holds(run)) return run;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}: ${JSON.stringify(run)}`);
  }
}

/** `tapedeck <args>` with `env`; resolves with what it printed on stdout, rejects if it fails. */
async function cli(env: Readonly<Record<string, string>>, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`tapedeck ${args.join(" ")} failed (${code}): ${err}`);
  return out.trim();
}

describeWithPostgres("tapedeck serve on PostgreSQL", (url) => {
  void describe("a server whose store is a postgres: URL", () => {
    void it("runs a script end to end through HTTP (a worker's host tool, a signal), with keys made in the store, and keeps its runs across a restart", async () => {
      const schema = freshSchemaName();
      const store = schemaUrl(url, schema);
      // What every node on a store URL must be given (`shared-secrets.ts`).
      const env = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
      let server = await startServeChild({ args: ["--store", store], fresh: true, env });
      try {
        const adminKey = server.adminKey ?? assert.fail("the store's first start prints the admin key");
        assert.ok(!server.stderr().includes(new URL(url).password), "the store URL's password is never printed");
        const limited = await cli({ TAPEDECK_STORE: store }, "keys", "create", "--namespace", "alice");
        // A key the store does not hold: the caller is told only that; the log names the command that works here (keys live in the store, not in a data folder).
        const refused = await fetch(`${server.url}/v1/runs`, { headers: { authorization: "Bearer tdk_not-in-this-store" } });
        assert.equal(refused.status, 401);
        const refusedText = await refused.text();
        assert.ok(/Unknown API key/.test(refusedText) && !refusedText.includes("--data") && !refusedText.includes(server.dataDir), refusedText);
        const hint = await server.stderrLine((line) => line.includes("its API key is not one of this server's"));
        assert.ok(hint.includes("tapedeck keys create --store <the store's URL>") && !hint.includes("--data"), hint);
        let td = server.client(adminKey);
        const toolset = (await td.toolsets.create(TOOLSET)).id;
        const worker = td.worker({ tools: { mail: { send: (_args: never, ctx: ToolContext) => `sent as ${ctx.idempotencyKey}` } } }).start();
        const alice = server.client(limited, "alice");
        let runId: string;
        try {
          const started = await alice.runs.start({ toolset, source: SCRIPT });
          const run = started.kind === "started" ? started.run : assert.fail(started.diagnostics.map((d) => d.message).join("\n"));
          runId = run.id;
          await until(alice, runId, "the run to wait for its signal", (r) => r.status === "waiting");
          await alice.runs.signal(runId, { name: "go", payload: { n: 1 } });
          const done = await until(alice, runId, "the run's end", (r) => r.status !== "waiting" && r.status !== "running");
          assert.deepEqual([done.status, done.output], ["completed", { sent: `sent as ${runId}/1`, go: { n: 1 } }]);
        } finally {
          await worker.stop();
        }
        assert.equal(await server.stop(), 0, server.stderr());
        // The next start finds the store's keys: it makes no admin key, and the run is there as it ended.
        server = await startServeChild({ dataDir: server.dataDir, args: ["--store", store], fresh: false, env });
        td = server.client(adminKey);
        const again = await td.runs.get(runId);
        assert.deepEqual([again.status, again.output], ["completed", { sent: `sent as ${runId}/1`, go: { n: 1 } }]);
        assert.deepEqual(
          (await td.runs.journal(runId)).entries.map((e) => e.kind),
          ["run.started", "call.scheduled", "call.completed", "call.scheduled", "call.completed", "run.completed"],
        );
        assert.equal(await server.stop(), 0, server.stderr());
        // Every CLI command reads the store TAPEDECK_STORE names, with no data folder at all.
        const listed = await cli({ TAPEDECK_STORE: store }, "runs", "--data", "/nonexistent/tapedeck-data");
        assert.match(listed, new RegExp(`${runId}.*completed`));
      } finally {
        await server.stop();
        server.cleanup();
        await dropSchema(url, schema);
      }
    });
  });
});
