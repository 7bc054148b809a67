import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { defineTool, toolsetSpec, workerTools } from "@tapedeck/sdk";
import { startServeChild } from "./test-support/serve-child.js";

/**
 * `sensitiveParams` through a real `tapedeck serve`, the SDK and a worker: a host tool written
 * with `defineTool` names `/password` sensitive and asks for approval; the call waits, the server
 * restarts, the call is approved, and the worker receives the real password (the re-run script's),
 * while the approval, the journal, the webhook outbox, the host task queue and every file of the
 * data folder hold only its hash.
 */

/** Joined by the script, so that the secret is not in its source (which the run keeps). */
const SECRET = "hunter2-s3cret-Value";
const MARKER = /^\[redacted hmac-sha256:[0-9a-f]{32}\]$/;

function filesContaining(dir: string, secret: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...filesContaining(path, secret));
    else if (readFileSync(path).includes(Buffer.from(secret))) found.push(path);
  }
  return found;
}

void describe("sensitiveParams over the API", () => {
  it("an approved call sent after a restart carries the real value to the worker; the server keeps only its hash", async () => {
    const received: unknown[] = [];
    const login = defineTool<{ user: string; password: string }>({
      group: "auth",
      name: "login",
      description: "Logs in.",
      inputSchema: { type: "object", properties: { user: { type: "string" }, password: { type: "string" } }, required: ["user", "password"] },
      policy: { approval: true, sensitiveParams: ["/password"] },
      execute: (args) => {
        received.push(args);
        return { ok: true };
      },
    });
    let server = await startServeChild();
    const adminKey = server.adminKey!;
    try {
      let td = server.client(adminKey);
      await td.webhooks.create({ url: "http://127.0.0.1:9/hook" });
      const toolset = await td.toolsets.create(toolsetSpec([login]));
      const started = await td.runs.start({
        toolset: toolset.id,
        source: `import { auth } from "tapedeck:tools";
          export default async () => auth.login({ user: "ada", password: ["hunter2", "s3cret", "Value"].join("-") });`,
      });
      if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
      const waiting = await td.runs.get(started.run.id, { wait: 30 });
      assert.equal(waiting.status, "waiting", JSON.stringify(waiting));
      const [pending] = await td.approvals.pending(started.run.id);
      assert.match((pending!.args as { password: string }).password, MARKER);
      const url = new URL(server.url);
      assert.equal(await server.stop(), 0, server.stderr());
      server = await startServeChild({ dataDir: server.dataDir, port: Number(url.port) });
      td = server.client(adminKey);
      const worker = td.worker({ tools: workerTools([login]) }).start();
      try {
        await td.approvals.approve(started.run.id, 1);
        const done = await td.runs.get(started.run.id, { wait: 30 });
        assert.deepEqual([done.status, done.output], ["completed", { ok: true }], JSON.stringify(done));
      } finally {
        await worker.stop();
      }
      assert.deepEqual(received, [{ user: "ada", password: SECRET }]);
      const journal = JSON.stringify(await td.runs.journal(started.run.id));
      assert.ok(!journal.includes(SECRET));
      assert.match(journal, /\[redacted hmac-sha256:[0-9a-f]{32}\]/);
      assert.equal(await server.stop(), 0, server.stderr());
      assert.deepEqual(filesContaining(server.dataDir, SECRET), []);
      assert.ok(!server.stderr().includes(SECRET), "not in the server's log");
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});
