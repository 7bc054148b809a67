import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import type { Tapedeck, WorkerHandle } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * A decision made from the CLI while no process holds the run or session, on a call of a host
 * tool the CLI cannot serve (no `--host`): the CLI journals the decision and leaves the call to
 * the server, restarted afterwards with a worker serving the tool, which sends it once. The CLI
 * never fails a call for want of a source (issue 22, item 14: it used to fail it for good with
 * "No host tool source is configured", and the model read that).
 */
const TOOLSET = {
  hostTools: {
    crm: {
      update_customer: {
        description: "Updates a customer.",
        inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      },
    },
  },
  policies: { "crm.update_customer": { approval: true } },
};

const CLI = fileURLToPath(new URL("./main.js", import.meta.url));

/** The real `tapedeck` command in a child process, to its end. */
async function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

const servers: ServeChild[] = [];
after(async () => {
  for (const server of servers) await server.stop();
  servers[0]?.cleanup();
});

async function serve(dataDir?: string): Promise<ServeChild> {
  const server = await startServeChild(dataDir === undefined ? {} : { dataDir });
  servers.push(server);
  return server;
}

/** A worker serving `crm.update_customer`, with the idempotency key of every call it gets. */
function crmWorker(td: Tapedeck, keys: string[]): WorkerHandle {
  return td
    .worker({
      tools: {
        crm: {
          update_customer: (args: { id: string }, ctx: { idempotencyKey: string }) => {
            keys.push(ctx.idempotencyKey);
            return { updated: args.id };
          },
        },
      },
    })
    .start();
}

describe("approving from the CLI a host tool call that no process holds", () => {
  it("journals the decision and leaves the call to the server, which sends it once after its restart: a direct session and a run", async () => {
    const first = await serve();
    const adminKey = first.adminKey!;
    const td = first.client(adminKey);
    const toolset = (await td.toolsets.create(TOOLSET)).id;
    const options = { toolset, session: "crm", approval: { ask: ["crm.update_customer"] } } as const;
    const asked = await td.directTools(options);
    assert.equal((await asked.call("generic", "crm_update_customer", { id: "c1" }, "tc1")).status, "pending");
    const started = await td.runs.start({
      toolset,
      source: `import { crm } from "tapedeck:tools";\nexport default async () => await crm.update_customer({ id: "c2" });`,
    });
    if (started.kind !== "started") assert.fail(JSON.stringify(started));
    const runId = started.run.id;
    assert.equal((await td.runs.get(runId, { wait: 30 })).status, "waiting");
    assert.equal(await first.stop(), 0, first.stderr());

    const data = ["--data", first.dataDir];
    const session = await runCli(["approve", `${asked.sessionId}/1`, ...data]);
    assert.equal(session.code, 0, session.stderr);
    assert.match(
      session.stderr,
      /^approved call #1 of session ses_[0-9a-f]+: the decision is journaled; the call is sent by the process that next holds the session/,
    );
    assert.match(session.stderr, /host tools \(crm\.update_customer\)/);
    const run = await runCli(["approve", `${runId}/1`, ...data]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`the decision is journaled; run ${runId} goes on in the next process that wakes it with its tools`));
    for (const id of [asked.sessionId, runId]) {
      const shown = await runCli(["show", id, ...data]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /call\.decided +#1 approved/);
      assert.doesNotMatch(shown.stdout, /call\.failed|call\.attempt/, "nothing was sent or failed from the CLI");
    }
    assert.equal((await runCli(["approvals", ...data])).stdout, "", "nothing waits for a decision any more");

    const second = await serve(first.dataDir);
    const again = second.client(adminKey);
    const keys: string[] = [];
    const worker = crmWorker(again, keys);
    try {
      const tools = await again.directTools(options);
      const result = await tools.handle("crm_update_customer", { id: "c1" }, { toolCallId: "tc1" });
      assert.deepEqual([result.isError, JSON.parse(result.text)], [false, { updated: "c1" }]);
      const ended = await again.runs.get(runId, { wait: 30, next: true });
      assert.deepEqual([ended.status, ended.output], ["completed", { updated: "c2" }]);
      assert.deepEqual(keys.sort(), [`${asked.sessionId}/1`, `${runId}/1`].sort(), "each call sent once, by the server");
    } finally {
      await worker.stop();
    }
  });
});
