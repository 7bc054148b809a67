import assert from "node:assert/strict";
import type { Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "../http/test-support/serve-child.js";

/**
 * A real `tapedeck serve` with two tenants, for the hostile-input suites: `mallory` sends what
 * an attacker would (scripts, tool results, webhook payloads, API bodies, names), and after each
 * attack `assertStillServing` proves that the process is up, `/health` answers, and a run of the
 * other tenant (`victim`) still starts and completes. Each suite file starts its own server.
 */
export interface HostileServer {
  /** The server process (a new one after `restart`). */
  readonly server: ServeChild;
  /** The operator's client (unlimited key). */
  readonly admin: Tapedeck;
  /** A client whose key is limited to the namespace `mallory`. */
  readonly attacker: Tapedeck;
  readonly attackerKey: string;
  /** A toolset both tenants may use: the host tool `probe.echo` answers its arguments. */
  readonly toolset: string;
  /** Fails unless the server still serves everyone: alive, healthy, and a victim's run completes. */
  assertStillServing(): Promise<void>;
  /**
   * Stops the server (SIGTERM; SIGKILL with `kill`, as a crash) and starts it again on the same
   * data folder and port, as an operator (or a supervisor) would after a fault: the runs it left
   * are resumed at start-up. `server`, `admin` and `attacker` are the new process's afterwards.
   */
  restart(options?: { readonly kill?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * `probe.echo` is in the shared toolset. The module also serves tools a suite may pin in a
 * toolset of its own: `probe.hang` never answers (a call in flight whenever the server stops).
 */
const HOST_MODULE = `export const probe = { echo: async (args) => args, hang: () => new Promise(() => {}) };`;
const TOOLSET = { hostTools: { probe: { echo: { description: "Answers its arguments." } } } };
const VICTIM_SCRIPT = `import { probe } from "tapedeck:tools";
export default async (input: { n: number }) => (await probe.echo({ n: input.n })) ;`;

export interface HostileServerOptions {
  /** More environment variables for the server. */
  readonly env?: Readonly<Record<string, string>>;
}

export async function startHostileServer(options: HostileServerOptions = {}): Promise<HostileServer> {
  const env = options.env ? { env: options.env } : {};
  let server = await startServeChild({ hostModule: HOST_MODULE, ...env });
  const adminKey = server.adminKey!;
  let admin = server.client(adminKey);
  const toolset = (await admin.toolsets.create(TOOLSET)).id;
  const attackerKey = await createKey(server.dataDir, "--namespace", "mallory");
  const victimKey = await createKey(server.dataDir, "--namespace", "victim");
  let attacker = server.client(attackerKey);
  let victim = server.client(victimKey);
  let probes = 0;
  return {
    get server() {
      return server;
    },
    get admin() {
      return admin;
    },
    get attacker() {
      return attacker;
    },
    attackerKey,
    toolset,
    async assertStillServing() {
      const health = await fetch(`${server.url}/health`);
      assert.equal(health.status, 200, `/health answered ${health.status}; the server's stderr:\n${server.stderr()}`);
      const n = ++probes;
      const started = await victim.runs.start({ toolset, source: VICTIM_SCRIPT, input: { n } });
      assert.equal(started.kind, "started", "the victim's script was refused");
      if (started.kind !== "started") return;
      const run = await victim.runs.get(started.run.id, { wait: 30 });
      assert.equal(run.status, "completed", `the victim's run did not complete: ${JSON.stringify(run)}`);
      assert.deepEqual(run.output, { n });
    },
    async restart(restartOptions = {}) {
      if (restartOptions.kill === true) await server.kill();
      else assert.equal(await server.stop(), 0, `the server did not stop cleanly; its stderr:\n${server.stderr()}`);
      const port = Number(new URL(server.url).port);
      server = await startServeChild({ hostModule: HOST_MODULE, dataDir: server.dataDir, port, ...env });
      admin = server.client(adminKey);
      attacker = server.client(attackerKey);
      victim = server.client(victimKey);
    },
    async close() {
      await server.stop();
      server.cleanup();
    },
  };
}
