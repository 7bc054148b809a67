import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createHash, randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Engine, openStore } from "@tapedeck/engine";
import { postgresHandle } from "@tapedeck/engine/postgres";
import { Tapedeck, verifyWebhook, type Run } from "@tapedeck/sdk";
import { describeWithPostgres, dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { TEST_ALLOW_LOOPBACK_ENV, TEST_RETRY_BASE_ENV } from "../cli/commands/serve.js";
import { startPgNodes, untilRun, type PgNodes } from "./test-support/pg-nodes.js";
import { startServeChild } from "./test-support/serve-child.js";
import { startReceiver } from "./test-support/webhook-receiver.js";

/**
 * Nodes on one store URL share the server's signing secret (`TAPEDECK_SIGNING_SECRET` or
 * `--signing-secret-file`) and the vault's master key (`TAPEDECK_MASTER_KEY`): a node started
 * without them refuses to start, saying what to set; with them, what one node signed or sealed
 * another verifies or opens — an end-user token, a webhook endpoint's secret, a credential —
 * and the master key rotates across nodes (`TAPEDECK_MASTER_KEY_PREVIOUS`, then `rotate-key` once).
 * Needs TAPEDECK_TEST_POSTGRES_URL.
 */
const CREDENTIAL = "pg_shared_cred_4f0b7e21";
const BIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** `tapedeck <args>` with `env` added; resolves with what it printed, rejects if it fails. */
async function cli(env: Readonly<Record<string, string>>, ...args: string[]): Promise<{ out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`tapedeck ${args.join(" ")} failed (${code}): ${err}`);
  return { out, err };
}

describeWithPostgres("the secrets nodes on one PostgreSQL share", (url) => {
  void describe("a node without them", () => {
    void it("refuses to start, saying what to set, and makes no admin key nobody would see", async () => {
      const schema = freshSchemaName();
      const store = schemaUrl(url, schema);
      const key = Buffer.alloc(32, 7);
      try {
        await assert.rejects(
          startServeChild({ args: ["--store", store], env: { TAPEDECK_SIGNING_SECRET: key.toString("hex"), TAPEDECK_MASTER_KEY: "" } }),
          (error: Error) =>
            /set TAPEDECK_MASTER_KEY to 32 bytes in base64 \(make them once with `openssl rand -base64 32`\), the same on every node/.test(error.message),
        );
        await assert.rejects(
          startServeChild({ args: ["--store", store], env: { TAPEDECK_SIGNING_SECRET: "", TAPEDECK_MASTER_KEY: key.toString("base64") } }),
          (error: Error) =>
            /set TAPEDECK_SIGNING_SECRET to 64 hex characters \(make them once with `openssl rand -hex 32`\), or pass --signing-secret-file/.test(
              error.message,
            ),
        );
        await assert.rejects(
          startServeChild({ args: ["--store", store], env: { TAPEDECK_SIGNING_SECRET: "abc", TAPEDECK_MASTER_KEY: key.toString("base64") } }),
          (error: Error) => /The signing secret in TAPEDECK_SIGNING_SECRET must be 64 hex characters/.test(error.message),
        );
        const server = await startServeChild({
          args: ["--store", store],
          env: { TAPEDECK_SIGNING_SECRET: key.toString("hex"), TAPEDECK_MASTER_KEY: key.toString("base64") },
          fresh: true,
        });
        assert.ok(server.adminKey?.startsWith("tdk_"), "the first start that works makes the admin key");
        assert.equal(await server.stop(), 0, server.stderr());
        server.cleanup();
      } finally {
        await dropSchema(url, schema);
      }
    });
  });

  void describe("a node given other secrets than the store's first node", () => {
    void it("refuses to start, naming the secret that differs; the store keeps only salted, keyed fingerprints of them", async () => {
      const nodes = await startPgNodes(url, 1);
      try {
        const other = { TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"), TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64") };
        await assert.rejects(nodes.start({ env: { TAPEDECK_SIGNING_SECRET: other.TAPEDECK_SIGNING_SECRET } }), (error: Error) => {
          assert.match(
            error.message,
            /This node's signing secret \(TAPEDECK_SIGNING_SECRET or --signing-secret-file\) is not the one the other nodes of this store were started with/,
          );
          assert.match(error.message, /Give this node the same TAPEDECK_SIGNING_SECRET as the others/);
          return true;
        });
        await assert.rejects(nodes.start({ env: { TAPEDECK_MASTER_KEY: other.TAPEDECK_MASTER_KEY } }), (error: Error) => {
          assert.match(error.message, /This node's TAPEDECK_MASTER_KEY is not the master key the other nodes of this store use/);
          assert.match(error.message, /TAPEDECK_MASTER_KEY_PREVIOUS/);
          return true;
        });
        // The same secrets: a second node starts, and its token is good on the first.
        const b = await nodes.start();
        const token = await b.client(nodes.adminKey).tokens.create({ namespace: "ann" });
        assert.deepEqual(await new Tapedeck({ baseUrl: nodes.nodes[0]!.url, apiKey: token.token }).runs.list(), []);

        const reader = await openStore(nodes.store);
        try {
          const handle = postgresHandle(reader) ?? assert.fail("a PostgreSQL store");
          const rows = await handle.read<{ name: string; salt: string; fingerprint: string }>(
            "SELECT name, salt, fingerprint FROM server_secret_fingerprints ORDER BY name",
          );
          assert.deepEqual(
            rows.map((row) => row.name),
            ["master key", "signing secret"],
          );
          const text = JSON.stringify(rows);
          for (const [name, value] of Object.entries(nodes.env)) {
            const bytes = name === "TAPEDECK_MASTER_KEY" ? Buffer.from(value, "base64") : Buffer.from(value, "hex");
            const plain = [value, bytes.toString("hex"), bytes.toString("base64"), bytes.toString("base64url")];
            const hashed = ["hex", "base64", "base64url"].map((encoding) =>
              createHash("sha256")
                .update(bytes)
                .digest(encoding as "hex" | "base64" | "base64url"),
            );
            for (const form of [...plain, ...hashed]) assert.ok(!text.includes(form), `the store holds ${name} or a plain hash of it`);
          }
        } finally {
          await reader.close();
        }
      } finally {
        await nodes.close();
      }
    });
  });

  void describe("two nodes given them", () => {
    let pair: PgNodes;
    let echo: Server;
    let echoUrl: string;
    const received: (string | undefined)[] = [];
    before(async () => {
      echo = createServer((req, res) => {
        received.push(req.headers.authorization);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
      });
      echo.listen(0, "127.0.0.1");
      await once(echo, "listening");
      echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`;
      pair = await startPgNodes(url, 2, { env: { [TEST_ALLOW_LOOPBACK_ENV]: "1", [TEST_RETRY_BASE_ENV]: "20" } });
    });
    after(async () => {
      await pair.close();
      echo.close();
    });

    const node = (i: number): Tapedeck => pair.nodes[i]!.client(pair.adminKey);

    void it("an end-user token minted on node A is accepted by node B", async () => {
      const { token } = await node(0).tokens.create({ namespace: "alice" });
      const alice = new Tapedeck({ baseUrl: pair.nodes[1]!.url, apiKey: token });
      assert.deepEqual(await alice.runs.list(), []);
    });

    void it("a webhook endpoint created on node A (after B started) gets the events of a run on node B, signed so that its secret verifies them", async () => {
      const receiver = await startReceiver();
      try {
        const endpoint = await node(0).webhooks.create({ url: receiver.url, events: ["run.completed"] });
        const toolset = (await node(1).toolsets.create({})).id;
        const started = await node(1).runs.start({ toolset, source: `export default async () => "done on B";` });
        const run: Run = started.kind === "started" ? started.run : assert.fail("the script type-checks");
        await untilRun(node(1), run.id, "the run's end", (r) => r.status === "completed");
        const hook = await receiver.request(1);
        const verified = await verifyWebhook(hook.body, hook.headers, endpoint.secret);
        assert.ok(verified.ok, verified.ok ? "" : verified.message);
        assert.equal(verified.event.type, "run.completed");
        assert.equal(verified.event.data.runId, run.id);
      } finally {
        await receiver.close();
      }
    });

    void it("a credential stored through node A is injected into the fetch of a run on node B", async () => {
      const toolset = (await node(0).toolsets.create({ http: { allow: ["127.0.0.1"] } })).id;
      await node(0).credentials.set({ name: "API", kind: "bearer", value: CREDENTIAL, hosts: ["127.0.0.1"], toolset });
      const started = await node(1).runs.start({ toolset, source: `export default async () => (await fetch("${echoUrl}")).status;` });
      const run: Run = started.kind === "started" ? started.run : assert.fail("the script type-checks");
      const done = await untilRun(node(1), run.id, "the run's end", (r) => r.status !== "running" && r.status !== "waiting");
      assert.deepEqual([done.status, done.output], ["completed", 200], JSON.stringify(done.error));
      assert.deepEqual(received, [`Bearer ${CREDENTIAL}`]);
    });
  });

  void describe("rotating the master key on two nodes", () => {
    void it("restart both with the new key and the old as previous, rotate once through A, then B with the new key alone injects the credential", async () => {
      const seen: (string | undefined)[] = [];
      const echo = createServer((req, res) => {
        seen.push(req.headers.authorization);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
      });
      echo.listen(0, "127.0.0.1");
      await once(echo, "listening");
      const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`;
      const nodes = await startPgNodes(url, 2, { env: { [TEST_ALLOW_LOOPBACK_ENV]: "1", [TEST_RETRY_BASE_ENV]: "20" } });
      const k1 = nodes.env.TAPEDECK_MASTER_KEY!;
      const k2 = randomBytes(32).toString("base64");
      const printed: string[] = [];
      const current = [...nodes.nodes];
      // Stops node i (its log kept for the leak scan) and starts it again on its folder and port with `env`.
      const restart = async (i: number, env: Record<string, string>): Promise<Tapedeck> => {
        const old = current[i]!;
        assert.equal(await old.stop(), 0, old.stderr());
        printed.push(old.stderr());
        const again = await nodes.start({ dataDir: old.dataDir, port: Number(new URL(old.url).port), env });
        current[i] = again;
        return again.client(nodes.adminKey);
      };
      const fetchOn = async (td: Tapedeck, toolset: string): Promise<Run> => {
        const started = await td.runs.start({ toolset, source: `export default async () => (await fetch("${echoUrl}")).status;` });
        const run: Run = started.kind === "started" ? started.run : assert.fail("the script type-checks");
        return untilRun(td, run.id, "the run's end", (r) => r.status !== "running" && r.status !== "waiting");
      };
      try {
        const a = current[0]!.client(nodes.adminKey);
        const toolset = (await a.toolsets.create({ http: { allow: ["127.0.0.1"] } })).id;
        await a.credentials.set({ name: "ROTATED", kind: "bearer", value: CREDENTIAL, hosts: ["127.0.0.1"], toolset });

        // A node with the new key alone while the store's nodes use the old one: refused at start, saying how to rotate.
        const stale = current[1]!;
        assert.equal(await stale.stop(), 0, stale.stderr());
        printed.push(stale.stderr());
        await assert.rejects(nodes.start({ dataDir: stale.dataDir, env: { TAPEDECK_MASTER_KEY: k2 } }), (error: Error) => {
          assert.match(error.message, /TAPEDECK_MASTER_KEY is not the master key the other nodes of this store use.*TAPEDECK_MASTER_KEY_PREVIOUS/s);
          printed.push(error.message);
          return true;
        });
        current[1] = await nodes.start({ dataDir: stale.dataDir, port: Number(new URL(stale.url).port) });

        // Step 1 begins: A with the new key and the old one as previous (the store's key is the new one now).
        const a2 = await restart(0, { TAPEDECK_MASTER_KEY: k2, TAPEDECK_MASTER_KEY_PREVIOUS: k1 });
        // A node with the new key alone before the rotation: that credential's use fails, saying what to set; nothing is sent.
        let b = await restart(1, { TAPEDECK_MASTER_KEY: k2 });
        const refused = await fetchOn(b, toolset);
        assert.equal(refused.status, "failed", JSON.stringify(refused));
        const error = JSON.stringify(refused.error);
        assert.match(error, /The credential ROTATED of toolset \S+ is sealed under master key \w+, which this node does not have/);
        assert.match(error, /set TAPEDECK_MASTER_KEY_PREVIOUS to the key it was sealed with/);
        assert.deepEqual(seen, []);
        printed.push(error);

        // Step 1: both nodes with the new key and the old one as previous; step 2: one rotation, through A.
        b = await restart(1, { TAPEDECK_MASTER_KEY: k2, TAPEDECK_MASTER_KEY_PREVIOUS: k1 });
        const rotated = await a2.credentials.rotateKey();
        assert.equal(rotated.rewrapped, 1);
        // The CLI on the store URL, with both keys as the nodes have them: nothing left to reseal.
        const again = await cli({ TAPEDECK_STORE: nodes.store, TAPEDECK_MASTER_KEY: k2, TAPEDECK_MASTER_KEY_PREVIOUS: k1 }, "credentials", "rotate-key");
        assert.match(again.err, /0 credential\(s\) re-encrypted/);
        const listed = await cli({ TAPEDECK_STORE: nodes.store, TAPEDECK_MASTER_KEY: k2 }, "credentials", "list");
        assert.match(listed.out, /^ROTATED\tbearer\t/);
        printed.push(again.out, again.err, listed.out, listed.err);

        // Step 3: B without the previous key injects the credential.
        b = await restart(1, { TAPEDECK_MASTER_KEY: k2 });
        const done = await fetchOn(b, toolset);
        assert.deepEqual([done.status, done.output], ["completed", 200], JSON.stringify(done.error));
        assert.deepEqual(seen, [`Bearer ${CREDENTIAL}`]);

        // No key and no value anywhere a node printed, in an error, or in a run's record or journal.
        printed.push(...current.map((n) => n.stderr()));
        const checker = await Engine.open({ store: nodes.store, wake: false });
        try {
          for (const run of await checker.listRuns({ limit: 100 })) printed.push(JSON.stringify({ run, journal: await checker.journal(run.id, 0, 1_000_000) }));
        } finally {
          await checker.close();
        }
        const leaks = [k1, k2, CREDENTIAL].flatMap((secret) => printed.filter((text) => text.includes(secret)).map(() => secret));
        assert.deepEqual(leaks, []);
        assert.ok(
          printed.some((text) => text.includes(toolset)),
          "control: the scan reads the runs",
        );
      } finally {
        await nodes.close();
        echo.close();
      }
    });
  });
});
