import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild } from "../http/test-support/serve-child.js";
import { collect, withCliTest } from "./test-support/child-cli.js";

/**
 * A data folder holds every tool call's arguments and results, the master key and the server's
 * signing secret: Tapedeck creates it (and its missing parents) 0700 and every file in it 0600,
 * the database's `-wal` and `-shm` included, whatever the umask lets through. The children
 * inherit this process's umask, set permissive here so that a mode would show.
 */
process.umask(0o022);

/** Every folder and file under `root`, with its permission bits. */
function modes(root: string): Map<string, number> {
  const found = new Map<string, number>([[root, statSync(root).mode & 0o777]]);
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) for (const [p, m] of modes(path)) found.set(p, m);
    else found.set(path, statSync(path).mode & 0o777);
  }
  return found;
}

function assertPrivate(root: string, expected: readonly string[]): void {
  const found = modes(root);
  for (const name of expected) assert.ok(found.has(join(root, name)), `${name} was written (found: ${[...found.keys()].join(", ")})`);
  for (const [path, mode] of found) {
    const want = statSync(path).isDirectory() ? 0o700 : 0o600;
    assert.equal(mode.toString(8), want.toString(8), `${path} is ${mode.toString(8)}`);
  }
}

const SCRIPT = `export default async () => { await sleep(1); return 1; };`;

describe("data folder modes", () => {
  it("tapedeck run and credentials set create the folder 0700 (its parents too) and the database, -wal, -shm and master key 0600", async () => {
    await withCliTest("tapedeck-modes-", async ({ dir, spawn }) => {
      writeFileSync(join(dir, "script.ts"), SCRIPT);
      writeFileSync(join(dir, "toolset.json"), JSON.stringify({ http: { allow: ["api.example.com"] } }));
      const data = join(dir, "new", "data");
      const run = await collect(spawn(["run", join(dir, "script.ts"), "--toolset", join(dir, "toolset.json"), "--data", data]));
      assert.equal(run.code, 0, run.stderr);
      const registered = await collect(spawn(["toolset", "register", join(dir, "toolset.json"), "--data", data]));
      const toolset = registered.stdout.split("\n")[0]!;
      const set = await collect(
        spawn(["credentials", "set", "API", "--kind", "bearer", "--host", "api.example.com", "--toolset", toolset, "--from-env", "TOKEN", "--data", data], {
          TOKEN: "t0ken",
        }),
      );
      assert.equal(set.code, 0, set.stderr);
      assert.equal(modes(join(dir, "new")).get(join(dir, "new"))?.toString(8), "700", "a parent it created");
      assertPrivate(data, ["tapedeck.db", "master.key"]);
    });
  });

  it("tapedeck serve creates the database, -wal, -shm, server secret and master key 0600 in a folder 0700", async () => {
    await withCliTest("tapedeck-modes-", async ({ dir }) => {
      const data = join(dir, "served");
      const server = await startServeChild({ dataDir: data });
      try {
        const td = new Tapedeck({ baseUrl: server.url, apiKey: await createKey(data) });
        const { id: toolset } = await td.toolsets.create({ http: { allow: ["api.example.com"] } });
        await td.credentials.set({ name: "API", kind: "bearer", value: "t0ken", hosts: ["api.example.com"], toolset });
        const started = await td.runs.start({ toolset, source: SCRIPT });
        assert.equal(started.kind, "started");
        if (started.kind === "started") assert.equal((await td.runs.get(started.run.id, { wait: 30 })).status, "completed");
        // Read while the server runs: its -wal and -shm exist only while the database is open.
        assertPrivate(data, ["tapedeck.db", "tapedeck.db-wal", "tapedeck.db-shm", "server-secret", "master.key"]);
      } finally {
        await server.stop();
      }
    });
  });

  it("Tapedeck.embedded creates its folder 0700 and its files 0600", async () => {
    await withCliTest("tapedeck-modes-", async ({ dir }) => {
      const data = join(dir, "embedded", "data");
      const td = await Tapedeck.embedded({ dataDir: data, durability: "off" });
      try {
        const { id: toolset } = await td.toolsets.create({});
        const started = await td.runs.start({ toolset, source: SCRIPT });
        if (started.kind === "started") assert.equal((await td.runs.get(started.run.id, { wait: 30 })).status, "completed");
        assertPrivate(join(dir, "embedded"), ["data/tapedeck.db", "data/tapedeck.db-wal", "data/server-secret"]);
      } finally {
        await td.close();
      }
    });
  });
});
